package sluice_test

import (
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// The models below restate each algorithm the textbook way, in exact big
// rationals and with none of the production code's encodings (ticks, GCRA
// arrival times, 128-bit helpers). On a clock that does not step back the
// production algorithms must agree with them on every decision.

type model interface {
	decide(now, cost int64) (allowed bool, remaining int64)
}

// bucketModel holds fractional tokens, starts full, refills q per w.
type bucketModel struct {
	b, q, w int64
	tokens  *big.Rat
	last    int64
	started bool
}

func (m *bucketModel) decide(now, cost int64) (bool, int64) {
	if !m.started {
		m.tokens, m.last, m.started = big.NewRat(m.b, 1), now, true
	}
	refill := new(big.Rat).SetFrac(big.NewInt(0).Mul(big.NewInt(now-m.last), big.NewInt(m.q)), big.NewInt(m.w))
	m.tokens.Add(m.tokens, refill)
	if m.tokens.Cmp(big.NewRat(m.b, 1)) > 0 {
		m.tokens.SetInt64(m.b)
	}
	m.last = now
	ok := m.tokens.Cmp(big.NewRat(cost, 1)) >= 0
	if ok {
		m.tokens.Sub(m.tokens, big.NewRat(cost, 1))
	}
	return ok, floorRat(m.tokens)
}

// logModel remembers every admission.
type logModel struct {
	q, w int64
	at   []int64
}

func (m *logModel) decide(now, cost int64) (bool, int64) {
	used := func() int64 {
		var n int64
		for _, t := range m.at {
			if t > now-m.w {
				n++
			}
		}
		return n
	}
	ok := used()+cost <= m.q
	if ok {
		for range cost {
			m.at = append(m.at, now)
		}
	}
	return ok, m.q - used()
}

// windowModel counts per aligned window; weighted adds the previous
// window's count scaled by the share still inside (now-w, now], floored.
type windowModel struct {
	q, w     int64
	weighted bool
	counts   map[int64]int64
}

func (m *windowModel) decide(now, cost int64) (bool, int64) {
	if m.counts == nil {
		m.counts = map[int64]int64{}
	}
	ws := now - ((now%m.w)+m.w)%m.w
	used := func() int64 {
		u := m.counts[ws]
		if m.weighted {
			share := new(big.Rat).SetFrac64(m.w-(now-ws), m.w)
			u += floorRat(share.Mul(share, big.NewRat(m.counts[ws-m.w], 1)))
		}
		return u
	}
	ok := used()+cost <= m.q
	if ok {
		m.counts[ws] += cost
	}
	return ok, m.q - used()
}

func floorRat(r *big.Rat) int64 {
	return new(big.Int).Div(r.Num(), r.Denom()).Int64()
}

func TestPropertyAgreesWithTextbookModels(t *testing.T) {
	for _, alg := range sluice.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				q := rapid.Int64Range(1, 50).Draw(t, "q")
				w := rapid.SampledFrom([]int64{1, 7, 1000, sec, 60 * sec, 86400 * sec}).Draw(t, "w")
				l := sluice.NewLimit(alg, q, time.Duration(w)*time.Microsecond)
				var m model
				switch alg {
				case sluice.AlgorithmFixedWindow:
					m = &windowModel{q: q, w: w}
				case sluice.AlgorithmSlidingCounter:
					m = &windowModel{q: q, w: w, weighted: true}
				case sluice.AlgorithmSlidingLog:
					m = &logModel{q: q, w: w}
				default:
					b := rapid.Int64Range(1, 2*q).Draw(t, "burst")
					l = l.WithBurst(b)
					m = &bucketModel{b: b, q: q, w: w}
				}
				now := rapid.Int64Range(-1<<40, 1<<40).Draw(t, "t0")
				var s sluice.State
				for range rapid.IntRange(1, 100).Draw(t, "n") {
					now += rapid.OneOf(rapid.Int64Range(0, max(w/q, 1)), rapid.Int64Range(0, 2*w)).Draw(t, "dt")
					cost := rapid.Int64Range(0, l.Burst()).Draw(t, "cost")
					var st sluice.Status
					s, st = storetest.Decided(l.Decide(s, now, cost))
					ok, rem := m.decide(now, cost)
					if st.Allowed != ok || st.Remaining != rem {
						t.Fatalf("at %d cost %d: got allowed=%v remaining=%d, model says %v %d",
							now, cost, st.Allowed, st.Remaining, ok, rem)
					}
				}
			})
		})
	}
}
