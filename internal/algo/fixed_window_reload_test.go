package algo

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A fixed window's count belongs to the window that holds its T, the time
// of its last charge, under the parameters it is decided by. Under other
// windows of the limit (a reload that moves its calendar or lengthens or
// shortens its window) it is kept while its last charge falls in now's
// window and dropped from the next window on: a month moved west on 10
// March keeps March's count; one moved east counts it until the new
// month, which starts on 31 March 19:00 UTC, and drops it there; a
// minute's count lengthened to an hour counts to the hour's end.
func TestAFixedWindowsCountIsKeptWhileItsLastChargeFallsInNowsWindow(t *testing.T) {
	at := func(m time.Month, d, h, min int) int64 {
		return micros(time.Date(2027, m, d, h, min, 0, 0, time.UTC))
	}
	month := func(off time.Duration) Params {
		return NewCalendarParams(5, PeriodMonth, int64(off/time.Microsecond))
	}
	hour, _ := NewParams(KindFixedWindow, 5, int64(time.Hour/time.Microsecond), 5, 0)
	minute, _ := NewParams(KindFixedWindow, 5, int64(time.Minute/time.Microsecond), 5, 0)
	west, east := month(5*time.Hour), month(-5*time.Hour)
	charged := at(3, 10, 11, 0) // the last charge, under a UTC month
	now := at(3, 10, 12, 0)
	for _, tc := range []struct {
		name    string
		p       Params
		t, now  int64
		kept    bool
		counted int64 // the start of the window kept
	}{
		{"a month moved to zone -05:00", west, charged, now, true, at(3, 1, 5, 0)},
		{"a month moved to start on the 5th", month(4 * 24 * time.Hour), charged, now, true, at(3, 5, 0, 0)},
		{"a month moved to start on the 5th, charged on the 3rd", month(4 * 24 * time.Hour), at(3, 3, 0, 0), now, false, 0},
		{"a month moved to zone +05:00", east, charged, now, true, at(2, 28, 19, 0)},
		{"a month moved to zone +05:00, the new month's last µs", east, charged, at(3, 31, 19, 0) - 1, true, at(2, 28, 19, 0)},
		{"a month moved to zone +05:00, the new next month", east, charged, at(3, 31, 19, 0), false, 0},
		{"a month moved to zone +05:00, charged in its first hours", east, at(3, 31, 20, 0), at(4, 1, 0, 0), true, at(3, 31, 19, 0)},
		{"a minute lengthened to an hour", hour, at(3, 10, 11, 34), at(3, 10, 11, 44), true, at(3, 10, 11, 0)},
		{"a minute lengthened to an hour, at its end", hour, at(3, 10, 11, 34), at(3, 10, 12, 0), false, 0},
		{"an hour shortened to a minute", minute, at(3, 10, 11, 10), at(3, 10, 11, 40), false, 0},
		{"an hour shortened to a minute, in the charge's minute", minute, at(3, 10, 11, 10), at(3, 10, 11, 10) + 30e6, true, at(3, 10, 11, 10)},
		{"a clock stepped back a window", month(0), charged, at(2, 27, 0, 0), true, at(3, 1, 0, 0)},
	} {
		s := State{T: tc.t, A: 5}
		var v Verdict
		FixedWindow(&tc.p, &s, tc.now, 0, &v)
		if want := map[bool]int64{true: 0, false: 5}[tc.kept]; v.Remaining != want {
			t.Errorf("%s: %d left, want %d", tc.name, v.Remaining, want)
			continue
		}
		if !tc.kept {
			continue
		}
		_, end := tc.p.Window(tc.counted)
		if v.Reset != end-tc.now || FixedWindow(&tc.p, &s, tc.now, 1, &v) || v.Retry != end-tc.now {
			t.Errorf("%s: reset in %d µs, a unit admitted %v, retry in %d; want none admitted, both in %d",
				tc.name, v.Reset, v.Allowed, v.Retry, end-tc.now)
		}
		// Once a unit is refunded, the next charge counts in the window
		// kept and writes its receipt as T.
		s.A = 4
		if !FixedWindow(&tc.p, &s, tc.now, 1, &v) || s.A != 5 || s.T != v.Charged || v.Charged != max(tc.now, tc.counted) {
			t.Errorf("%s: after a charge %+v (receipt %d), want 5 and T the receipt %d", tc.name, s, v.Charged, max(tc.now, tc.counted))
		}
	}
}

// Under unchanged parameters every rollover drops the count, for every
// period, offset and window length, and T after a charge is its receipt.
func TestFixedWindowRolloverUnderTheSameParametersStartsAfresh(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100_000; i++ {
		p := randomFixedWindow(r)
		t0 := r.Int64N(1<<50) - 1<<49
		var s State
		var v Verdict
		FixedWindow(&p, &s, t0, 2, &v)
		if s.T != t0 || v.Charged != t0 {
			t.Fatalf("params %+v: charged at %d: T %d, receipt %d; want both the charge's time", p, t0, s.T, v.Charged)
		}
		_, end := p.Window(t0)
		var later int64
		switch r.IntN(3) {
		case 0:
			later = end // the next window's first µs
		case 1:
			_, next := p.Window(end)
			later = next + r.Int64N(p.W) // a window or two further
		default:
			later = end + r.Int64N(3*p.W)
		}
		FixedWindow(&p, &s, later, 0, &v)
		if v.Remaining != 3 || v.Reset != 0 {
			t.Fatalf("params %+v: charged at %d, then at %d (window end %d): %d left, reset in %d; want a fresh window",
				p, t0, later, end, v.Remaining, v.Reset)
		}
		FixedWindow(&p, &s, end-1, 0, &v)
		if v.Remaining != 1 {
			t.Fatalf("params %+v: charged at %d: at the window's last µs %d left, want 1", p, t0, v.Remaining)
		}
	}
}

// A state an earlier version wrote, T its window's start, decides every
// check as the state of the same count charged last at any time of that
// window does, at any time, a clock step back included, and writes the
// same count and receipt.
func TestAFixedWindowStateOfAnEarlierVersionDecidesAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 100_000; i++ {
		p := randomFixedWindow(r)
		t0 := r.Int64N(1<<50) - 1<<49
		start, end := p.Window(t0)
		a := 1 + r.Int64N(p.Q)
		old, cur := State{T: start, A: a}, State{T: start + r.Int64N(end-start), A: a}
		now := t0 + r.Int64N(4*p.W) - 2*p.W
		cost := r.Int64N(p.Q + 1)
		var vo, vc Verdict
		co, cc := FixedWindow(&p, &old, now, cost, &vo), FixedWindow(&p, &cur, now, cost, &vc)
		if vo != vc || co != cc || old.A != cur.A || co && old.T != cur.T {
			t.Fatalf("params %+v, %d units in the window from %d, checked at %d for %d: %+v → %+v, %+v against %+v → %+v, %+v",
				p, a, start, now, cost, State{T: start, A: a}, old, vo, State{T: cur.T, A: a}, cur, vc)
		}
	}
}

// A refund gives back exactly what a charge took while the state's T, its
// last charge or an earlier version's window start, falls in the window
// of the receipt; nothing once the count is of a later window.
func TestAFixedWindowRefundFindsTheWindowOfTheLastCharge(t *testing.T) {
	p := NewCalendarParams(5, PeriodMonth, 0)
	at := func(m time.Month, d int) int64 { return micros(time.Date(2027, m, d, 0, 0, 0, 0, time.UTC)) }
	var s State
	var v Verdict
	FixedWindow(&p, &s, at(3, 3), 2, &v)
	first := v.Charged
	FixedWindow(&p, &s, at(3, 10), 1, &v)
	if s.T != at(3, 10) || s.A != 3 {
		t.Fatalf("after two charges %+v, want T 10 March and 3", s)
	}
	if got := Refund(&p, s, first, 2); got.A != 1 || got.T != s.T {
		t.Errorf("the first charge refunded: %+v, want 1 left and T kept", got)
	}
	if got := Refund(&p, State{T: at(3, 1), A: 3}, first, 2); got.A != 1 {
		t.Errorf("refunded into an earlier version's state: %+v, want 1 left", got)
	}
	if got := Refund(&p, State{T: at(4, 2), A: 3}, first, 2); got.A != 3 {
		t.Errorf("a receipt of March refunded into April's count: %+v, want it kept", got)
	}
}

// randomFixedWindow returns a fixed window of quantity 3 of a random
// calendar or length.
func randomFixedWindow(r *rand.Rand) Params {
	if r.IntN(2) == 0 {
		period := Period(1 + r.IntN(4))
		span := period.Shortest() - 1
		return NewCalendarParams(3, period, r.Int64N(2*span+1)-span)
	}
	p, _ := NewParams(KindFixedWindow, 3, 1+r.Int64N(int64(400*24*time.Hour/time.Microsecond)), 3, 0)
	return p
}
