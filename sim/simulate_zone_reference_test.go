package sim

import (
	"context"
	"strings"
	"testing"
)

// Zone and Starts apply to Reference as to Limit: with a Zone, "100/day" is
// that zone's calendar day whether it is the limit or the reference, so
// stating the limit again as the reference measures the same run as
// leaving it empty ("empty means Limit"), boundary bursts at the zone's day
// starts and the fixed window's +100% across them included. A calendar
// reference takes Starts as the limit does.
func TestZonedReferenceIsReadAsTheLimitItRepeats(t *testing.T) {
	for _, base := range []Request{
		{Limit: "100/day", Zone: "+09:00"},
		{Limit: "100/24h", Zone: "-05:30"},
		{Limit: "100/month", Zone: "+09:00", Starts: "15"},
		{Limit: "100/week", Starts: "sunday"},
	} {
		base.Pattern, base.Algorithms, base.Workers = &Pattern{Name: PatternBoundaryBurst}, []string{"fixed-window"}, 1
		alone, err := Simulate(context.Background(), base)
		if err != nil {
			t.Fatal(err)
		}
		withRef := base
		withRef.Reference = base.Limit
		again, err := Simulate(context.Background(), withRef)
		if err != nil {
			t.Fatal(err)
		}
		a, b := alone.Result, again.Result
		if a.Reference != b.Reference || a.Period != b.Period ||
			a.Algorithms[0].WorstWindow != b.Algorithms[0].WorstWindow || a.Algorithms[0].Admitted != b.Algorithms[0].Admitted {
			t.Errorf("-limit %s -zone %q -starts %q: without -reference: reference %q, period %q, worst %d, admitted %d; with -reference %s: reference %q, period %q, worst %d, admitted %d",
				base.Limit, base.Zone, base.Starts, a.Reference, a.Period, a.Algorithms[0].WorstWindow, a.Algorithms[0].Admitted,
				base.Limit, b.Reference, b.Period, b.Algorithms[0].WorstWindow, b.Algorithms[0].Admitted)
		}
	}
}

// A zone shifts no window but a day's and a calendar period's: beside a
// zoned limit, a reference of another window is read as written; Starts,
// which applies to no day, is refused on a zoned per-day reference as on
// a zoned per-day limit.
func TestZoneLeavesOtherReferencesAsWrittenAndStartsStaysRefusedOnADay(t *testing.T) {
	req := Request{Limit: "100/day", Zone: "+09:00", Reference: "5/1h", Pattern: &Pattern{Name: PatternSteady}, Algorithms: []string{"fixed-window"}}
	if err := req.Validate(); err != nil {
		t.Errorf("-limit 100/day -zone +09:00 -reference 5/1h: %v", err)
	}
	for _, req := range []Request{
		{Limit: "100/day", Zone: "+09:00", Starts: "15"},
		{Limit: "100/month", Zone: "+09:00", Starts: "15", Reference: "100/day"},
	} {
		req.Pattern, req.Algorithms = &Pattern{Name: PatternSteady}, []string{"fixed-window"}
		if err := req.Validate(); err == nil || !strings.Contains(err.Error(), "starts") {
			t.Errorf("-limit %s -zone %s -starts %s -reference %q: %v, want starts refused", req.Limit, req.Zone, req.Starts, req.Reference, err)
		}
	}
}
