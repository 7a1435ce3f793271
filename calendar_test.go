package sluice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

func TestCalendarLimitParameters(t *testing.T) {
	for _, tt := range []struct {
		l       sluice.Limit
		name    string
		window  time.Duration
		text    string
		invalid string // a part of Err's text, "" when valid
	}{
		{l: sluice.Calendar(10_000, sluice.Month), name: "per-month", window: 31 * 24 * time.Hour,
			text: "per-month: fixed-window 10000 per month"},
		{l: sluice.Calendar(7, sluice.Year), name: "per-year", window: 366 * 24 * time.Hour},
		{l: sluice.Calendar(7, sluice.Week).WithOffset(6 * 24 * time.Hour), name: "per-week", window: 7 * 24 * time.Hour,
			text: "per-week: fixed-window 7 per week offset 144h0m0s"},
		{l: sluice.Calendar(7, sluice.Day).WithOffset(-9 * time.Hour), name: "per-day", window: 24 * time.Hour},
		{l: sluice.Calendar(7, sluice.Month).WithOffset(28 * 24 * time.Hour), invalid: "offset 672h0m0s must be shorter than the shortest month"},
		{l: sluice.Calendar(7, sluice.Day).WithOffset(-24 * time.Hour), invalid: "shorter than the shortest day"},
		{l: sluice.Calendar(7, sluice.Period(9)), invalid: "unknown calendar period"},
		{l: sluice.Calendar(0, sluice.Month), invalid: "quantity 0"},
		{l: sluice.FixedWindow(7, time.Hour).WithOffset(time.Minute), invalid: "an offset applies only to a calendar limit"},
	} {
		err := tt.l.Err()
		if tt.invalid != "" {
			if err == nil || !errors.Is(err, sluice.ErrInvalidLimit) || !strings.Contains(err.Error(), tt.invalid) {
				t.Errorf("%v: Err() = %v, want one saying %q", tt.l, err, tt.invalid)
			}
			continue
		}
		if err != nil || tt.l.Name() != tt.name || tt.l.Window() != tt.window || tt.l.Algorithm() != sluice.AlgorithmFixedWindow {
			t.Errorf("%v: err %v, name %q, window %v", tt.l, err, tt.l.Name(), tt.l.Window())
		}
		if tt.text != "" && tt.l.String() != tt.text {
			t.Errorf("String() = %q, want %q", tt.l.String(), tt.text)
		}
	}
}

// Degradation and per-instance shares scale a calendar limit's quantity and
// keep its calendar and its state's ID.
func TestScaleKeepsCalendarAndID(t *testing.T) {
	l := sluice.Calendar(1000, sluice.Month).WithOffset(-9 * time.Hour).Named("monthly").WithID("quota")
	s := l.Scale(1, 2)
	if s.Err() != nil || s.Quantity() != 500 || s.Period() != sluice.Month || s.Offset() != -9*time.Hour || s.ID() != "quota" || s.Name() != "monthly" {
		t.Fatalf("Scale(1, 2) of %v = %v (id %q, err %v)", l, s, s.ID(), s.Err())
	}
	b := sluice.GCRA(100, time.Minute).Named("per-minute").WithID("rpm")
	if s := b.Scale(1, 3); s.ID() != "rpm" || s.Err() != nil {
		t.Fatalf("Scale of a bucket dropped its ID: %q (%v)", s.ID(), s.Err())
	}
}

// A monthly quota through a Store: spent in January, whole again at the
// first moment of February, told so in ResetAfter.
func TestCalendarMonthThroughTheMemoryStore(t *testing.T) {
	now := time.Date(2027, 1, 31, 22, 0, 0, 0, time.UTC)
	store := memory.New(memory.WithClock(func() time.Time { return now }))
	defer store.Close()
	lim := sluice.NewLimiter(store)
	checks := []sluice.Check{{Key: "acme", Limit: sluice.Calendar(2, sluice.Month), Cost: 1}}
	var d sluice.Decision
	ctx := context.Background()
	for i, want := range []bool{true, true, false} {
		if err := lim.Allow(ctx, checks, &d); err != nil || d.Allowed != want {
			t.Fatalf("request %d: allowed %v (err %v), want %v", i, d.Allowed, err, want)
		}
	}
	if d.RetryAfter != 2*time.Hour || d.ResetAfter != 2*time.Hour {
		t.Fatalf("retry after %v, reset after %v: want 2h, February's first moment", d.RetryAfter, d.ResetAfter)
	}
	now = time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
	if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed || d.Remaining != 1 || d.ResetAfter != 28*24*time.Hour {
		t.Fatalf("February: allowed %v remaining %d reset after %v (err %v), want a fresh month of 28 days", d.Allowed, d.Remaining, d.ResetAfter, err)
	}
}

// A plan's monthly quota, counted by the calendar of a zone nine hours east
// of UTC: its months start at 15:00 UTC on the last day of the month before.
func ExampleCalendar() {
	monthly := sluice.Calendar(10_000, sluice.Month).WithOffset(-9 * time.Hour)
	fmt.Println(monthly)

	now := time.Date(2027, 1, 31, 16, 0, 0, 0, time.UTC) // 01:00 on February 1 in Tokyo
	store := memory.New(memory.WithClock(func() time.Time { return now }))
	defer store.Close()
	var d sluice.Decision
	checks := []sluice.Check{{Key: "acme", Limit: monthly, Cost: 1}}
	if err := sluice.NewLimiter(store).Allow(context.Background(), checks, &d); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("remaining", d.Remaining, "whole again at", now.Add(d.ResetAfter).Format(time.RFC3339))
	// Output:
	// per-month: fixed-window 10000 per month offset -9h0m0s
	// remaining 9999 whole again at 2027-02-28T15:00:00Z
}
