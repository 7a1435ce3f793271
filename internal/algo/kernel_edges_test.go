package algo

import "testing"

// A sliding counter whose clock steps back into the window before its
// state's counts that instant as the state's window start (Decide: a now
// earlier than the state's latest time counts as that time): the previous
// count weighs at most itself, never more. Q 10 per 1000 µs: 4 admitted at
// 999, 1 at 1999 (the 4 then weigh ⌊4·1/1000⌋ = 0), so the state is the
// window at 1000 with 1 in it and 4 before. Peeked at 0, 1000 µs behind,
// the estimate is 4 + 1 = 5, remaining 5, and a check of 5 fits.
func TestSlidingCounterStepBackWeighsPreviousAtMostOnce(t *testing.T) {
	p, _ := NewParams(KindSlidingCounter, 10, 1000, 10, 0)
	var s State
	var v Verdict
	if !Decide(&p, &s, 999, 4, &v) || !Decide(&p, &s, 1999, 1, &v) {
		t.Fatalf("setup refused: %+v", v)
	}
	if s.T != 1000 || s.A != 1 || s.B != 4 {
		t.Fatalf("state %+v, want T 1000 A 1 B 4", s)
	}
	peek := s
	Decide(&p, &peek, 0, 0, &v)
	if v.Remaining != 5 {
		t.Fatalf("peek 1000 µs behind the state: remaining %d, want 5 (%+v)", v.Remaining, v)
	}
	if !Decide(&p, &s, 0, 5, &v) || v.Remaining != 0 {
		t.Fatalf("a check of 5, 1000 µs behind the state: %+v, want admitted with 0 remaining", v)
	}
}

// Release gives back the lease of the given units stamped at: a stamp
// with other units is not that lease, which stays held (as in
// sliding_log.lua's remove, exact for leases).
func TestReleaseGivesBackOnlyALeaseOfTheSameUnits(t *testing.T) {
	p, _ := NewParams(KindConcurrency, 5, 1_000_000, 5, 0)
	var s State
	var v Verdict
	if !Decide(&p, &s, 100, 2, &v) {
		t.Fatalf("lease refused: %+v", v)
	}
	at := v.Lease
	if got := Release(&p, s, at, 3); len(got.Log) != 1 || got.Log[0] != (Entry{At: at, Units: 2}) {
		t.Fatalf("Release(at %d, 3 units) of a 2-unit lease gave %+v, want the lease still held", at, got.Log)
	}
	if got := Release(&p, s, at, 2); len(got.Log) != 0 {
		t.Fatalf("Release(at %d, 2 units) left %+v, want no lease", at, got.Log)
	}
}

// Decide accepts any state and never trusts one to create capacity (see
// the package doc): counts near the int64 bound saturate, never wrap to a
// negative use that admits everything.
func TestHugeCountsSaturateAndRefuse(t *testing.T) {
	const huge = 1<<63 - 1
	sc, _ := NewParams(KindSlidingCounter, 10, 1000, 10, 0)
	s := State{T: 5000, A: huge, B: 1} // the previous count weighs 1 at e = 0
	var v Verdict
	if Decide(&sc, &s, 5000, 1, &v) || v.Allowed || v.Remaining != 0 {
		t.Fatalf("sliding counter over A = MaxInt64, B = 1: %+v, want refused with 0 remaining", v)
	}
	sl, _ := NewParams(KindSlidingLog, 10, 1000, 10, 0)
	s = State{Log: []Entry{{At: 5000, Units: huge}, {At: 5000, Units: 1}}}
	if Decide(&sl, &s, 5000, 1, &v) || v.Allowed || v.Remaining != 0 {
		t.Fatalf("sliding log holding MaxInt64 + 1 units: %+v, want refused with 0 remaining", v)
	}
}
