package algo

import (
	"math"
	"testing"
)

// Edge cases of the arithmetic and the kernels: each pins a documented property that
// no other test of the package exercised.

// MulDivFloor is "computed in 128 bits and saturated at math.MaxInt64": a
// product whose high word equals the divisor has a quotient of at least
// 2^64, so it saturates (and must not reach bits.Div64, which panics when
// the high word is not below the divisor).
func TestMulDivFloorSaturatesWhenTheHighWordEqualsTheDivisor(t *testing.T) {
	for _, c := range []struct{ a, b, c int64 }{
		{1 << 62, 4, 1},  // a·b = 2^64: high word 1
		{1 << 62, 8, 2},  // a·b = 2^65: high word 2
		{1 << 62, 12, 3}, // a·b = 3·2^64: high word 3
	} {
		if got := MulDivFloor(c.a, c.b, c.c); got != math.MaxInt64 {
			t.Errorf("MulDivFloor(%d, %d, %d) = %d, want MaxInt64 (saturated)", c.a, c.b, c.c, got)
		}
	}
	// High word 1 below a divisor of 2: the quotient 2^63 is exact in
	// 128 bits but past int64, so it saturates too.
	if got := MulDivFloor(1<<62, 4, 2); got != math.MaxInt64 {
		t.Errorf("MulDivFloor(2^62, 4, 2) = %d, want MaxInt64 (2^63, saturated)", got)
	}
	if got := MulDivFloor(1<<62, 2, 2); got != 1<<62 {
		t.Errorf("MulDivFloor(2^62, 2, 2) = %d, want 2^62", got)
	}
}

// Every algorithm clamps stored times into [MinTime, MaxTime] "so neither
// adding a window nor the difference of two times ever overflows" (algo.go).
// A fixed window whose state's last charge is at MaxInt64 (a corrupt state,
// or a clock far ahead) counts against that charge's window — a clock step
// back — and refuses a full window with a positive wait: never a negative
// Retry or Reset, which a wrapped window end would give.
func TestFixedWindowLastChargeAtMaxInt64DoesNotOverflow(t *testing.T) {
	p, _ := NewParams(KindFixedWindow, 10, 1000, 10, 0)
	for _, now := range []int64{0, -5000, MaxTime - 1} {
		s := State{T: math.MaxInt64, A: 10}
		var v Verdict
		if Decide(&p, &s, now, 1, &v) || v.Allowed {
			t.Fatalf("now %d: full window (last charge at MaxInt64) admitted: %+v", now, v)
		}
		if v.Retry <= 0 || v.Reset <= 0 || v.Remaining != 0 {
			t.Fatalf("now %d: refused with %+v, want Retry > 0, Reset > 0, Remaining 0", now, v)
		}
		Decide(&p, &s, now, 0, &v)
		if v.Reset <= 0 || v.Remaining != 0 {
			t.Fatalf("now %d: peek %+v, want Reset > 0 and Remaining 0", now, v)
		}
	}
}

// The same for the sliding counter: a state whose window start is MaxInt64
// is read as the window of MaxTime, so its Reset (the window's end plus the
// fading of its count) and a refused check's Retry stay positive.
func TestSlidingCounterWindowAtMaxInt64DoesNotOverflow(t *testing.T) {
	p, _ := NewParams(KindSlidingCounter, 10, 1000, 10, 0)
	for _, now := range []int64{0, -5000, MaxTime - 1} {
		s := State{T: math.MaxInt64, A: 10}
		var v Verdict
		if Decide(&p, &s, now, 1, &v) || v.Allowed {
			t.Fatalf("now %d: full window at MaxInt64 admitted: %+v", now, v)
		}
		if v.Retry <= 0 || v.Reset <= 0 || v.Remaining != 0 {
			t.Fatalf("now %d: refused with %+v, want Retry > 0, Reset > 0, Remaining 0", now, v)
		}
		s = State{T: math.MaxInt64, A: 1}
		Decide(&p, &s, now, 0, &v)
		if v.Reset <= 0 || v.Remaining != 9 {
			t.Fatalf("now %d: peek of 1 counted %+v, want Reset > 0 and Remaining 9", now, v)
		}
	}
}

// A refused check's Retry is "the shortest wait ... after which the same
// check is allowed" (sluice.Status.RetryAfter), for any state: a log entry
// of negative units (out of range, clamped to 0) frees nothing and must not
// delay the retry either. Q 5 per 1000 µs, log (0: -3) (100: 2) (200: 3):
// 5 counted at 300, and a check of 1 fits once the entry at 100 has left,
// at 1100 — not one µs earlier, not later.
func TestSlidingLogRetryIsExactOverANegativeEntry(t *testing.T) {
	p, _ := NewParams(KindSlidingLog, 5, 1000, 5, 0)
	log := []Entry{{At: 0, Units: -3}, {At: 100, Units: 2}, {At: 200, Units: 3}}
	var v Verdict
	s := State{Log: log}
	if Decide(&p, &s, 300, 1, &v) || v.Allowed {
		t.Fatalf("5 of 5 counted: a check of 1 admitted: %+v", v)
	}
	retry := v.Retry
	if retry <= 0 {
		t.Fatalf("refused with Retry %d", retry)
	}
	before := State{Log: log}
	if Decide(&p, &before, 300+retry-1, 1, &v) {
		t.Fatalf("Retry %d is not the shortest wait: the check fits 1 µs earlier", retry)
	}
	at := State{Log: log}
	if !Decide(&p, &at, 300+retry, 1, &v) {
		t.Fatalf("the check is refused at now + Retry (%d): %+v", retry, v)
	}
}

// The same for the sliding log: an entry stamped MaxInt64 counts as one at
// MaxTime (a clock far behind it counts as its time), so a refused check's
// Retry and the Reset stay positive instead of wrapping past MaxInt64.
func TestSlidingLogEntryAtMaxInt64DoesNotOverflow(t *testing.T) {
	p, _ := NewParams(KindSlidingLog, 10, 1000, 10, 0)
	for _, now := range []int64{0, -5000, MaxTime - 1} {
		s := State{Log: []Entry{{At: math.MaxInt64, Units: 10}}}
		var v Verdict
		if Decide(&p, &s, now, 1, &v) || v.Allowed {
			t.Fatalf("now %d: full log (entry at MaxInt64) admitted: %+v", now, v)
		}
		if v.Retry <= 0 || v.Reset <= 0 || v.Remaining != 0 {
			t.Fatalf("now %d: refused with %+v, want Retry > 0, Reset > 0, Remaining 0", now, v)
		}
		s = State{Log: []Entry{{At: math.MaxInt64, Units: 1}}}
		Decide(&p, &s, now, 0, &v)
		if v.Reset <= 0 || v.Remaining != 9 {
			t.Fatalf("now %d: peek of 1 logged %+v, want Reset > 0 and Remaining 9", now, v)
		}
	}
}
