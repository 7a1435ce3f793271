package sluice_test

import (
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// event is one check in a generated sequence and what Decide said of it.
type event struct {
	now, cost int64
	st        sluice.Status
	eff       int64 // max(now, the latest admission's eff): a step back is no time passing
}

// genLimit draws a valid limit of algorithm alg with parameters from tiny to
// near the bounds.
func genLimit(t *rapid.T, alg sluice.Algorithm) sluice.Limit {
	q := rapid.OneOf(rapid.Int64Range(1, 10), rapid.Int64Range(1, 1000), rapid.Int64Range(1, sluice.MaxQuantity)).Draw(t, "q")
	maxW := int64(sluice.MaxWindow / time.Microsecond)
	if alg == sluice.AlgorithmFixedWindow {
		maxW = int64(sluice.MaxFixedWindow / time.Microsecond)
	}
	wUS := rapid.OneOf(
		rapid.SampledFrom([]int64{1, 1000, sec, 60 * sec, 3600 * sec, 86400 * sec, maxW}),
		rapid.Int64Range(1, maxW),
	).Draw(t, "w")
	l := sluice.NewLimit(alg, q, time.Duration(wUS)*time.Microsecond)
	if alg == sluice.AlgorithmFixedWindow && rapid.IntRange(0, 2).Draw(t, "calendar") == 0 {
		period := sluice.Period(rapid.IntRange(1, 4).Draw(t, "period"))
		shortest := map[sluice.Period]int64{sluice.Day: 1, sluice.Week: 7, sluice.Month: 28, sluice.Year: 365}[period] * 86400 * sec
		off := rapid.Int64Range(-shortest+1, shortest-1).Draw(t, "offset")
		l = sluice.Calendar(q, period).WithOffset(time.Duration(off) * time.Microsecond)
	}
	if alg == sluice.AlgorithmTokenBucket || alg == sluice.AlgorithmLeakyBucket || alg == sluice.AlgorithmGCRA {
		if rapid.Bool().Draw(t, "custom burst") {
			l = l.WithBurst(rapid.Int64Range(1, max(2*q, 10)).Draw(t, "burst"))
		}
	}
	if alg == sluice.AlgorithmLeakyBucket && rapid.Bool().Draw(t, "queue") {
		l = l.WithMaxWait(time.Duration(rapid.Int64Range(1, 1<<40).Draw(t, "maxWait")) * time.Microsecond)
	}
	if l.Err() != nil {
		// Bucket limits whose ticks would pass 2^53 are refused by design;
		// fall back to a rate that divides evenly.
		l = sluice.NewLimit(alg, q, time.Duration(q)*time.Microsecond)
	}
	if err := l.Err(); err != nil {
		t.Fatalf("generated an invalid limit: %v", err)
	}
	return l
}

// genSequence runs a generated sequence of checks through Decide from the
// zero State and checks the per-decision invariants (README, Semantics) on the way.
func genSequence(t *rapid.T, l sluice.Limit, backwards bool) []event {
	w := int64(l.Window() / time.Microsecond)
	b := l.Burst()
	now := rapid.Int64Range(-1<<50, 1<<50).Draw(t, "t0")
	var s sluice.State
	var evs []event
	var seen int64 = math.MinInt64 // the latest time an admission wrote
	n := rapid.IntRange(1, 60).Draw(t, "n")
	for i := range n {
		if i > 0 {
			var dt int64
			switch rapid.IntRange(0, 9).Draw(t, "step kind") {
			case 0:
				dt = 0
			case 1, 2, 3:
				dt = rapid.Int64Range(1, max(w/max(l.Quantity(), 1), 1)).Draw(t, "small step")
			case 4, 5, 6:
				dt = rapid.Int64Range(1, 2*w).Draw(t, "step")
			case 7:
				dt = rapid.Int64Range(w-2, w+2).Draw(t, "step near w")
			case 8:
				dt = rapid.Int64Range(1, 1<<46).Draw(t, "long step")
			case 9:
				if backwards {
					dt = -rapid.Int64Range(1, 3*w).Draw(t, "step back")
				}
			}
			now += dt
		}
		eff := max(now, seen)
		cost := rapid.OneOf(
			rapid.Int64Range(0, min(b, 3)),
			rapid.Int64Range(0, b),
			rapid.Int64Range(b, b+2),
			rapid.Just(int64(math.MaxInt64)),
		).Draw(t, "cost")
		before := cloneState(s)
		next, st := storetest.Decided(l.Decide(s, now, cost))

		if st.Remaining < 0 || st.Remaining > b {
			t.Fatalf("remaining %d outside [0, %d]", st.Remaining, b)
		}
		if st.ResetAfter < 0 || st.RetryAfter < 0 || st.Delay < 0 {
			t.Fatalf("negative duration in %+v", st)
		}
		switch {
		case cost > b:
			if st.Allowed || st.RetryAfter != sluice.Never {
				t.Fatalf("cost %d above burst %d: %+v, want refused with RetryAfter Never", cost, b, st)
			}
		case cost == 0:
			if !st.Allowed {
				t.Fatalf("a peek was refused: %+v", st)
			}
		}
		if !st.Allowed || cost == 0 {
			if !equalState(next, before) {
				t.Fatalf("refused or peek changed state: %+v -> %+v", before, next)
			}
		}
		if st.Allowed && st.RetryAfter != 0 {
			t.Fatalf("allowed with RetryAfter %v", st.RetryAfter)
		}
		if !st.Allowed && cost <= b {
			checkRetry(t, l, before, now, cost, st, backwards)
		}
		if st.Allowed && st.Delay > l.MaxWait() {
			t.Fatalf("delay %v above max wait %v", st.Delay, l.MaxWait())
		}
		if st.Allowed && cost > 0 {
			evs = append(evs, event{now: now, cost: cost, st: st, eff: eff})
			seen = eff
		}
		s = next

		// A clock stepping back never shows more capacity than the latest
		// time the state has seen.
		back := rapid.Int64Range(1, 2*w).Draw(t, "look back")
		_, later := storetest.Decided(l.Decide(s, eff, 0))
		_, earlier := storetest.Decided(l.Decide(s, eff-back, 0))
		if earlier.Remaining > later.Remaining {
			t.Fatalf("stepping back %dµs from %d shows %d remaining, more than %d", back, eff, earlier.Remaining, later.Remaining)
		}
	}
	return evs
}

// checkRetry: retrying at now+RetryAfter succeeds if nothing else arrived,
// and (on a clock that has not stepped back) one microsecond earlier fails.
func checkRetry(t *rapid.T, l sluice.Limit, s sluice.State, now, cost int64, st sluice.Status, backwards bool) {
	r := int64(st.RetryAfter / time.Microsecond)
	if r <= 0 {
		t.Fatalf("refused with RetryAfter %v", st.RetryAfter)
	}
	if _, again := storetest.Decided(l.Decide(cloneState(s), now+r, cost)); !again.Allowed {
		t.Fatalf("retry after %dµs still refused: %+v", r, again)
	}
	if backwards {
		return
	}
	if _, early := storetest.Decided(l.Decide(cloneState(s), now+r-1, cost)); early.Allowed {
		t.Fatalf("RetryAfter %dµs is not the shortest: %dµs already admits", r, r-1)
	}
}

func cloneState(s sluice.State) sluice.State {
	s.Log = slices.Clone(s.Log)
	return s
}

func equalState(a, b sluice.State) bool {
	return a.T == b.T && a.A == b.A && a.B == b.B && slices.Equal(a.Log, b.Log)
}

// checkPromise verifies that admitted work never exceeds what the algorithm
// promises, with times taken as the latest time seen (a step back counts as
// no time passing, which is what every algorithm assumes or is stricter than).
func checkPromise(t *rapid.T, l sluice.Limit, evs []event) {
	q, b := l.Quantity(), l.Burst()
	w := int64(l.Window() / time.Microsecond)
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
		per := map[int64]int64{}
		for _, e := range evs {
			ws := e.eff - ((e.eff%w)+w)%w
			if l.Period() != 0 {
				ws = calendarStart(l, e.eff)
			}
			if per[ws] += e.cost; per[ws] > q {
				t.Fatalf("%d admitted in the aligned window at %d, limit %d", per[ws], ws, q)
			}
		}
	case sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency: // never releasing: leases are log entries
		for i := range evs {
			var sum int64
			for j := i; j < len(evs) && evs[j].eff < evs[i].eff+w; j++ {
				sum += evs[j].cost
			}
			if sum > q {
				t.Fatalf("%d admitted within %dµs from %d, limit %d", sum, w, evs[i].eff, q)
			}
		}
	default: // buckets: in any span [ti, tj] at most b + ⌊(tj-ti)·q/w⌋
		// A queue's delays are rounded up to the microsecond, so work due in
		// (ti-1, ti] may run at ti: allow that one microsecond.
		slack := int64(0)
		if l.MaxWait() > 0 {
			slack = 1
		}
		times := make([]int64, len(evs))
		costs := make([]int64, len(evs))
		for i, e := range evs {
			times[i] = max(e.eff, e.now+int64(e.st.Delay/time.Microsecond)) // when the work runs
			costs[i] = e.cost
		}
		for i := range times {
			var sum int64
			for j := range times {
				if times[j] < times[i] {
					continue
				}
				sum = 0
				for k := range times {
					if times[k] >= times[i] && times[k] <= times[j] {
						sum += costs[k]
					}
				}
				bound := new(big.Int).Mul(big.NewInt(times[j]-times[i]+slack), big.NewInt(q))
				bound.Div(bound, big.NewInt(w))
				bound.Add(bound, big.NewInt(b))
				if big.NewInt(sum).Cmp(bound) > 0 {
					t.Fatalf("%d units run in [%d, %d], promise is %v", sum, times[i], times[j], bound)
				}
			}
		}
	}
}

// calendarStart returns the first µs of the calendar period of l that
// holds us, by Go's time package: the period's start in a calendar whose
// midnights are l.Offset() after UTC's.
func calendarStart(l sluice.Limit, us int64) int64 {
	off := l.Offset()
	at := sluice.TimeFromMicros(us).Add(-off).UTC()
	var first time.Time
	switch l.Period() {
	case sluice.Day:
		first = time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	case sluice.Week:
		first = time.Date(at.Year(), at.Month(), at.Day()-(int(at.Weekday())+6)%7, 0, 0, 0, 0, time.UTC)
	case sluice.Month:
		first = time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		first = time.Date(at.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return sluice.MicrosSinceEpoch(first.Add(off))
}

// allKinds is every algorithm, the concurrency kind included.
var allKinds = append(sluice.Algorithms(), sluice.AlgorithmConcurrency)

func TestPropertyInvariants(t *testing.T) {
	for _, alg := range allKinds {
		t.Run(alg.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				l := genLimit(t, alg)
				evs := genSequence(t, l, false)
				checkPromise(t, l, evs)
			})
		})
	}
}

func TestPropertyClockStepsBack(t *testing.T) {
	for _, alg := range allKinds {
		t.Run(alg.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				l := genLimit(t, alg)
				evs := genSequence(t, l, true)
				checkPromise(t, l, evs)
			})
		})
	}
}

func TestPropertyExtremeValuesNeverOverflow(t *testing.T) {
	for _, alg := range allKinds {
		t.Run(alg.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				l := genLimit(t, alg)
				s := sluice.State{
					T: rapid.Int64().Draw(t, "T"),
					A: rapid.Int64().Draw(t, "A"),
					B: rapid.Int64().Draw(t, "B"),
				}
				if alg == sluice.AlgorithmSlidingLog || alg == sluice.AlgorithmConcurrency {
					at := rapid.Int64().Draw(t, "at")
					s = sluice.State{Log: []sluice.LogEntry{{At: at, Units: rapid.Int64().Draw(t, "units")}}}
				}
				now := rapid.OneOf(rapid.Int64(), rapid.Int64Range(math.MaxInt64-1<<20, math.MaxInt64),
					rapid.Int64Range(math.MinInt64, math.MinInt64+1<<20)).Draw(t, "now")
				cost := rapid.OneOf(rapid.Int64Range(0, l.Burst()), rapid.Int64Range(l.Burst(), math.MaxInt64)).Draw(t, "cost")
				next, st := storetest.Decided(l.Decide(s, now, cost))
				if st.Remaining < 0 || st.Remaining > l.Burst() {
					t.Fatalf("remaining %d outside [0, %d]", st.Remaining, l.Burst())
				}
				if st.ResetAfter < 0 || st.RetryAfter < 0 || st.Delay < 0 {
					t.Fatalf("negative duration in %+v", st)
				}
				if cost > l.Burst() && (st.Allowed || st.RetryAfter != sluice.Never) {
					t.Fatalf("cost above burst: %+v", st)
				}
				if !st.Allowed && !equalState(next, s) {
					t.Fatalf("refusal changed state")
				}
			})
		})
	}
}

// The bucket family shares one model: on a clock that does not step back,
// token bucket, leaky meter and GCRA decide identically.
func TestPropertyBucketsAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tb := genLimit(t, sluice.AlgorithmTokenBucket)
		others := []sluice.Limit{using(tb, sluice.AlgorithmGCRA), using(tb, sluice.AlgorithmLeakyBucket)}
		states := make([]sluice.State, 1+len(others))
		now := rapid.Int64Range(-1<<50, 1<<50).Draw(t, "t0")
		for range rapid.IntRange(1, 50).Draw(t, "n") {
			now += rapid.Int64Range(0, 2*int64(tb.Window()/time.Microsecond)).Draw(t, "dt")
			cost := rapid.Int64Range(0, tb.Burst()+1).Draw(t, "cost")
			var want sluice.Status
			states[0], want = storetest.Decided(tb.Decide(states[0], now, cost))
			for i, l := range others {
				var got sluice.Status
				states[i+1], got = storetest.Decided(l.Decide(states[i+1], now, cost))
				if got != want {
					t.Fatalf("%v says %+v, token bucket %+v", l.Algorithm(), got, want)
				}
			}
		}
	})
}

// Releasing a lease gives exactly its units back, and leaves the caller's
// state untouched.
func TestPropertyReleaseGivesBackTheLease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genLimit(t, sluice.AlgorithmConcurrency)
		now := rapid.Int64Range(0, 1<<50).Draw(t, "now")
		var s sluice.State
		type held struct{ at, units int64 }
		var leases []held
		for range rapid.IntRange(1, 30).Draw(t, "n") {
			now += rapid.Int64Range(0, 10).Draw(t, "dt")
			if len(leases) > 0 && rapid.Bool().Draw(t, "release") {
				i := rapid.IntRange(0, len(leases)-1).Draw(t, "which")
				_, before := storetest.Decided(l.Decide(s, now, 0))
				kept := cloneState(s)
				s = l.Release(s, leases[i].at, leases[i].units)
				if !equalState(kept, cloneState(kept)) {
					t.Fatal("Release changed its input")
				}
				_, after := storetest.Decided(l.Decide(s, now, 0))
				live := leases[i].at+int64(l.Window()/time.Microsecond) > now
				if live && after.Remaining != min(before.Remaining+leases[i].units, l.Burst()) {
					t.Fatalf("release of %d: remaining %d -> %d", leases[i].units, before.Remaining, after.Remaining)
				}
				leases = append(leases[:i], leases[i+1:]...)
				continue
			}
			cost := rapid.Int64Range(1, l.Burst()).Draw(t, "cost")
			next, st := storetest.Decided(l.Decide(s, now, cost))
			if st.Allowed {
				if st.Lease == 0 && now != 0 {
					t.Fatal("no lease stamp")
				}
				leases = append(leases, held{st.Lease, cost})
				s = next
			}
		}
	})
}

// using returns the bucket limit l under the bucket algorithm alg, with
// the same quantity, window, burst and name.
func using(l sluice.Limit, alg sluice.Algorithm) sluice.Limit {
	return sluice.NewLimit(alg, l.Quantity(), l.Window()).WithBurst(l.Burst()).Named(l.Name())
}

// ResetAfter is exact: a peek at now+ResetAfter shows the whole Burst and
// one 1µs earlier does not; RetryAfter is the shortest wait that admits.
// Both hold also once a limit decides the state its unscaled self wrote,
// as a degradation level's Scale does (the two share an ID).
func TestPropertyResetAfterIsExactAlsoAfterScale(t *testing.T) {
	for _, alg := range sluice.Algorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				orig := genLimit(t, alg)
				scaled := orig.Scale(1, rapid.Int64Range(1, 5).Draw(t, "den"))
				w := int64(orig.Window() / time.Microsecond)
				now := rapid.Int64Range(-1<<40, 1<<40).Draw(t, "t0")
				var s sluice.State
				for i := range rapid.IntRange(1, 30).Draw(t, "n") {
					now += rapid.OneOf(rapid.Int64Range(0, max(w/orig.Quantity(), 1)), rapid.Int64Range(0, 2*w)).Draw(t, "dt")
					l := orig
					if i >= 10 {
						l = scaled
					}
					cost := rapid.Int64Range(0, l.Burst()).Draw(t, "cost")
					before := cloneState(s)
					var st sluice.Status
					s, st = storetest.Decided(l.Decide(s, now, cost))
					r := int64(st.ResetAfter / time.Microsecond)
					if _, at := storetest.Decided(l.Decide(cloneState(s), now+r, 0)); at.Remaining != l.Burst() {
						t.Fatalf("%v: %d remaining after ResetAfter %dµs, want %d", l, at.Remaining, r, l.Burst())
					}
					if _, early := storetest.Decided(l.Decide(cloneState(s), now+r-1, 0)); r > 0 && early.Remaining == l.Burst() {
						t.Fatalf("%v: ResetAfter %dµs, but full 1µs earlier", l, r)
					}
					if !st.Allowed {
						checkRetry(t, l, before, now, cost, st, false)
					}
				}
			})
		})
	}
}
