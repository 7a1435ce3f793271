package algo

import "testing"

// Edge cases of Refund: each pins a documented
// property that no other test of the package exercised.

// "The fixed window takes them from its count while T ... falls in the
// window of at" (Refund): a state whose last charge is in an earlier window
// than the receipt's (one that never counted that receipt: a state restored
// or rewritten since) keeps its count. TestRefundEdges covers the state in a
// later window; this is the other side.
func TestFixedWindowRefundLeavesAnEarlierWindowsCount(t *testing.T) {
	fw, _ := NewParams(KindFixedWindow, 10, 100, 10, 0)
	for _, T := range []int64{50, 0, -100} {
		if got := Refund(&fw, State{T: T, A: 5}, 200, 3); got.A != 5 || got.T != T {
			t.Errorf("receipt at 200 refunded into the window of %d: %+v, want A 5 untouched", T, got)
		}
	}
}

// Refund makes "the state as if they had never been charged": it takes at
// most cost units back. A log entry of negative units (out of range, which
// Decide counts as 0) stamped with the receipt's time must not enlarge the
// refund: log (100: 3) (100: -2) counts 3, and a refund of 1 leaves 2
// counted, not 0.
func TestSlidingLogRefundTakesAtMostItsCost(t *testing.T) {
	p, _ := NewParams(KindSlidingLog, 10, 1000, 10, 0)
	s := State{Log: []Entry{{At: 100, Units: 3}, {At: 100, Units: -2}}}
	var v Verdict
	peek := s
	Decide(&p, &peek, 150, 0, &v)
	if v.Remaining != 7 {
		t.Fatalf("before the refund: %+v, want 7 remaining", v)
	}
	got := Refund(&p, s, 100, 1)
	Decide(&p, &got, 150, 0, &v)
	if v.Remaining != 8 {
		t.Fatalf("after refunding 1 of 3 counted: %+v (state %+v), want 8 remaining", v, got)
	}
}
