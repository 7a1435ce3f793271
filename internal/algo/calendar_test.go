package algo

import (
	"math/rand/v2"
	"testing"
	"time"
)

var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func micros(t time.Time) int64 { return t.Sub(epoch).Microseconds() }

// calendarOracle returns the window of period holding t by Go's time
// package: the period's first moment in a fixed zone east of UTC by -off
// (so that windows start off after the UTC calendar's), and the next one.
func calendarOracle(period Period, off time.Duration, t time.Time) (time.Time, time.Time) {
	// Shift into a calendar whose midnights are off after UTC's.
	l := t.Add(-off).UTC()
	var first, next time.Time
	switch period {
	case PeriodDay:
		first = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
		next = first.AddDate(0, 0, 1)
	case PeriodWeek:
		back := (int(l.Weekday()) + 6) % 7 // days since Monday
		first = time.Date(l.Year(), l.Month(), l.Day()-back, 0, 0, 0, 0, time.UTC)
		next = first.AddDate(0, 0, 7)
	case PeriodMonth:
		first = time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, time.UTC)
		next = first.AddDate(0, 1, 0)
	case PeriodYear:
		first = time.Date(l.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		next = first.AddDate(1, 0, 0)
	}
	return first.Add(off), next.Add(off)
}

// TestCalendarWindowMatchesTimePackage holds every period's windows to Go's
// calendar over random times from 1900 to 2200 and random offsets within a
// period's shortest length, and at each month's edges.
func TestCalendarWindowMatchesTimePackage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lo := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	hi := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	check := func(period Period, off int64, at time.Time) {
		t.Helper()
		start, end := CalendarWindow(period, off, micros(at))
		ws, we := calendarOracle(period, time.Duration(off)*time.Microsecond, at)
		if start != micros(ws) || end != micros(we) {
			t.Fatalf("period %d offset %v at %v: window [%v, %v), want [%v, %v)", period, time.Duration(off)*time.Microsecond,
				at, epoch.Add(time.Duration(start)*time.Microsecond), epoch.Add(time.Duration(end)*time.Microsecond), ws, we)
		}
		if n := end - start; n < period.Shortest() || n > period.Longest() {
			t.Fatalf("period %d: a window of %d µs", period, n)
		}
	}
	for i := 0; i < 200_000; i++ {
		period := Period(1 + r.IntN(4))
		span := period.Shortest() - 1
		off := r.Int64N(2*span+1) - span
		if i%3 == 0 {
			off = 0
		}
		at := lo.Add(time.Duration(r.Int64N(int64(hi.Sub(lo)/time.Microsecond))) * time.Microsecond)
		check(period, off, at)
	}
	// Each month's first µs and the one before, with and without an offset
	// of a zone nine hours east of UTC.
	for m := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC); m.Year() < 2102; m = m.AddDate(0, 1, 0) {
		for _, off := range []time.Duration{0, -9 * time.Hour, 14 * 24 * time.Hour} {
			for _, d := range []time.Duration{-time.Microsecond, 0} {
				for period := PeriodDay; period <= PeriodYear; period++ {
					check(period, int64(off/time.Microsecond), m.Add(off+d))
				}
			}
		}
	}
}

// TestCalendarWindowAtTheTimeBounds: the windows of the clamped extremes
// hold them and do not overflow.
func TestCalendarWindowAtTheTimeBounds(t *testing.T) {
	for period := PeriodDay; period <= PeriodYear; period++ {
		for _, at := range []int64{MinTime, MaxTime, -1, 0} {
			for _, off := range []int64{0, -(period.Shortest() - 1), period.Shortest() - 1} {
				start, end := CalendarWindow(period, off, at)
				if start > at || at >= end || end-start < period.Shortest() || end-start > period.Longest() {
					t.Errorf("period %d offset %d at %d: window [%d, %d)", period, off, at, start, end)
				}
			}
		}
	}
}

// TestCalendarFixedWindow: a monthly quota counts a calendar month, resets
// at the next month's first moment, and says so in Reset and Retry.
func TestCalendarFixedWindow(t *testing.T) {
	p := NewCalendarParams(3, PeriodMonth, 0)
	var s State
	var v Verdict
	feb := micros(time.Date(2024, 2, 29, 23, 0, 0, 0, time.UTC)) // a leap year's last day of February
	mar := micros(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	for i := 0; i < 3; i++ {
		FixedWindow(&p, &s, feb, 1, &v)
		if !v.Allowed {
			t.Fatalf("check %d refused", i)
		}
	}
	if v.Reset != mar-feb || v.Remaining != 0 {
		t.Fatalf("reset %d remaining %d, want %d and 0", v.Reset, v.Remaining, mar-feb)
	}
	FixedWindow(&p, &s, mar-1, 1, &v)
	if v.Allowed || v.Retry != 1 {
		t.Fatalf("the month's last µs: allowed %v retry %d, want refused for 1 µs", v.Allowed, v.Retry)
	}
	FixedWindow(&p, &s, mar, 1, &v)
	if !v.Allowed || v.Remaining != 2 || s.T != mar {
		t.Fatalf("March: allowed %v remaining %d window %d, want a fresh month from %d", v.Allowed, v.Remaining, s.T, mar)
	}
	apr := micros(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC))
	if v.Reset != apr-mar {
		t.Fatalf("March resets in %d µs, want 31 days", v.Reset)
	}
	// A refund of February's charge in March gives nothing back; of
	// March's, gives it back.
	if got := Refund(&p, s, feb, 1); got.A != 1 {
		t.Fatalf("a refund of last month's charge changed this month's count to %d", got.A)
	}
	if got := Refund(&p, s, mar, 1); got.A != 0 {
		t.Fatalf("a refund of this month's charge left %d", got.A)
	}
}
