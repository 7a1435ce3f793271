package algo

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// oracleBucket is the bucket family's arithmetic as first written (commit
// 4ef87c5), before its divisions were taken off the hot path: five 64-bit
// divisions on GCRA's admitted path, one ceilDiv per rounded quotient. It is
// kept as an oracle because redis/lua implements this same form and the
// conformance suite requires both stores to decide identically: the
// production code must agree with it bit for bit, on every state. Its token
// and leaky buckets store GCRA's form, and read the form they stored before
// (B = 0: T the last update, A the ticks missing then) as they did.
func oracleBucket(l *Params, s *State, now, cost int64, v *Verdict) bool {
	now = ClampTime(now)
	capT := l.B * l.RW
	limitT := capT + l.MaxWait*l.RQ
	base, missing := oracleBucketLoad(l, s, now, limitT)
	ahead := base - now
	view := func(m int64) {
		if m < capT {
			v.Remaining = (capT - m) / l.RW
		}
		v.Reset = AddSat(ahead, ceilDiv(m, l.RQ))
	}
	if cost == 0 || cost > l.B {
		*v = Verdict{Allowed: cost == 0}
		view(missing)
		if cost > l.B {
			v.Retry = MaxTime
		}
		return false
	}
	need := cost * l.RW
	if missing > limitT-need {
		*v = Verdict{Retry: AddSat(ahead, ceilDiv(missing-(limitT-need), l.RQ))}
		view(missing)
		return false
	}
	after := missing + need
	var delay int64
	if after > capT {
		delay = ahead + ceilDiv(after-capT, l.RQ)
		if delay > l.MaxWait {
			*v = Verdict{Retry: delay - l.MaxWait}
			view(missing)
			return false
		}
	}
	*v = Verdict{Allowed: true, Delay: delay}
	view(after)
	*s = State{T: base + after/l.RQ, B: after%l.RQ + 1}
	return true
}

func oracleBucketLoad(l *Params, s *State, now, limitT int64) (base, missing int64) {
	last := ClampTime(s.T)
	if l.Kind == KindGCRA || s.B > 0 { // GCRA's form, every bucket's since
		if s.B <= 0 {
			return now, 0
		}
		frac := min(s.B-1, l.RQ-1)
		if last < now || last == now && frac == 0 {
			return now, 0
		}
		if k := limitT/l.RQ + 1; last-now > k {
			return last - k, k*l.RQ + frac
		}
		return now, (last-now)*l.RQ + frac
	}
	missing = min(max(s.A, 0), limitT)
	if missing == 0 {
		return now, 0
	}
	base = max(now, last)
	elapsed := base - last
	if elapsed >= ceilDiv(missing, l.RQ) {
		return base, 0
	}
	return base, missing - elapsed*l.RQ
}

// genBucketLimit draws valid bucket parameters whose rate has every shape
// of tick: RQ = 1, RW = 1, both, neither, and either near its bound.
func genBucketLimit(t *rapid.T) Params {
	kind := rapid.SampledFrom([]Kind{KindTokenBucket, KindLeakyBucket, KindGCRA}).Draw(t, "kind")
	q := rapid.OneOf(rapid.Int64Range(1, 10), rapid.SampledFrom([]int64{1, 3, 7, 100, 10_000, 1e6, 1e9, maxQuantity}),
		rapid.Int64Range(1, maxQuantity)).Draw(t, "q")
	w := rapid.OneOf(rapid.Int64Range(1, 10), rapid.SampledFrom([]int64{1, 3, 1000, 1e6, 60e6, 3600e6, 86400e6, 1 << 45}),
		rapid.Int64Range(1, 1<<45)).Draw(t, "w")
	b, maxWait := q, int64(0)
	if rapid.Bool().Draw(t, "custom burst") {
		b = rapid.OneOf(rapid.Int64Range(1, 10), rapid.Int64Range(1, maxQuantity)).Draw(t, "burst")
	}
	if kind == KindLeakyBucket && rapid.Bool().Draw(t, "queue") {
		maxWait = rapid.OneOf(rapid.Int64Range(1, 100), rapid.Int64Range(1, 1<<45)).Draw(t, "maxWait")
	}
	p, ok := NewParams(kind, q, w, b, maxWait)
	if !ok {
		p, _ = NewParams(kind, q, q, q, 0) // 1 per µs: always exact
	}
	return p
}

// maxQuantity is sluice.MaxQuantity.
const maxQuantity = 1 << 40

// genBucketState draws a state a bucket limit may meet: the zero State,
// one written under these or other parameters, or any three int64s.
func genBucketState(t *rapid.T, now int64) State {
	near := func(label string) int64 {
		return now + rapid.Int64Range(-1<<46, 1<<46).Draw(t, label)
	}
	anyInt := rapid.OneOf(rapid.Int64(), rapid.SampledFrom([]int64{math.MinInt64, -1, 0, 1, 2, MaxTime, MinTime, math.MaxInt64}))
	switch rapid.IntRange(0, 3).Draw(t, "state kind") {
	case 0:
		return State{}
	case 1:
		return State{T: near("T"), A: rapid.Int64Range(-10, 1<<54).Draw(t, "A"), B: rapid.Int64Range(-10, 1<<41).Draw(t, "B")}
	default:
		return State{T: anyInt.Draw(t, "T"), A: anyInt.Draw(t, "A"), B: anyInt.Draw(t, "B")}
	}
}

// The bucket family decides exactly as the oracle: the same admission, the
// same verdict to the µs and the same state to the tick, from any state, at
// any time, for any cost, also over sequences on a clock that steps back.
func TestPropertyBucketMatchesOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genBucketLimit(t)
		now := rapid.OneOf(rapid.Int64Range(-1<<50, 1<<50), rapid.Int64()).Draw(t, "t0")
		s := genBucketState(t, now)
		w := l.W
		for i := range rapid.IntRange(1, 30).Draw(t, "n") {
			if i > 0 {
				now += rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(-w, 2*w), rapid.Int64Range(-1<<47, 1<<47),
					rapid.Int64Range(1, max(w/l.Q, 1))).Draw(t, "dt")
			}
			cost := rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, l.B+1), rapid.Int64()).Draw(t, "cost")
			cost = max(cost, 0) // stores refuse negative costs before deciding
			want, got := s, s
			var wantV, gotV Verdict
			wantOK := oracleBucket(&l, &want, now, cost, &wantV)
			gotOK := Decide(&l, &got, now, cost, &gotV)
			if gotOK != wantOK || gotV != wantV || !sameState(got, want) {
				t.Fatalf("%v from %+v at %d cost %d:\n got %v %+v %+v\nwant %v %+v %+v",
					l, s, now, cost, gotOK, gotV, got, wantOK, wantV, want)
			}
			s = got
		}
	})
}

func sameState(a, b State) bool {
	return a.T == b.T && a.A == b.A && a.B == b.B && len(a.Log) == len(b.Log) && (a.Log == nil) == (b.Log == nil)
}
