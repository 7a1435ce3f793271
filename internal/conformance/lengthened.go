package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// RunLengthenedWindows plays on store the reload of limits to longer
// windows — same name and algorithm, a second's window become an hour's —
// and checks the promise that a reload keeps what clients spent
// (docs/decisions.md) past the expiry the old limit gave a state: once a
// call refused under the new limit has read the state (refused by it, or
// by another limit of the call), the store keeps it for as long as the new
// limit counts it. The scenarios above cannot tell, as their stores never
// forget; here the store forgets what it may while pass lets at least 2 s
// go by (its clock and a sweep for the memory store; real time for Redis,
// whose keys expire on its own clock), after which every state must still
// count what it counted before.
//
// The store decides at its own time, which must not reach an hour's end
// between the first call and pass's return (the hour's window would start
// afresh). Keys are prefixed with prefix + "/".
func RunLengthenedWindows(t *testing.T, store sluice.Store, prefix string, pass func()) {
	t.Helper()
	ctx := context.Background()
	daily := sluice.FixedWindow(1, 24*time.Hour).Named("daily")
	other := sluice.PerDay(100).Named("other")
	cases := []struct {
		name     string
		old, cur sluice.Limit
		spent    int64         // of the limits' 3, before the reload
		with     *sluice.Limit // the refused call's other check, if any
	}{
		{"fixed window, refused", sluice.FixedWindow(3, sec), sluice.FixedWindow(3, time.Hour), 3, nil},
		{"sliding counter, refused", sluice.SlidingCounter(3, sec), sluice.SlidingCounter(3, time.Hour), 3, nil},
		{"sliding log, refused", sluice.SlidingLog(3, sec), sluice.SlidingLog(3, time.Hour), 3, nil},
		{"fixed window, refused beside a new state", sluice.FixedWindow(3, sec), sluice.FixedWindow(3, time.Hour), 3, &other},
		{"fixed window, the call refused by another limit", sluice.FixedWindow(3, sec), sluice.FixedWindow(3, time.Hour), 2, &daily},
		{"sliding log, the call refused by another limit", sluice.SlidingLog(3, sec), sluice.SlidingLog(3, time.Hour), 2, &daily},
	}
	apply := func(checks ...sluice.Check) []sluice.Status {
		t.Helper()
		out := make([]sluice.Status, len(checks))
		if err := store.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	key := func(i int) string { return fmt.Sprintf("%s/lengthened%d", prefix, i) }
	for i, tc := range cases {
		old, cur := tc.old.Named("quota"), tc.cur.Named("quota")
		spend := []sluice.Check{{Key: key(i), Limit: old, Cost: tc.spent}}
		if tc.with == &daily {
			spend = append(spend, sluice.Check{Key: key(i), Limit: daily, Cost: 1})
		}
		for _, st := range apply(spend...) {
			if !st.Allowed {
				t.Fatalf("%s: spending before the reload refused", tc.name)
			}
		}
		call := []sluice.Check{{Key: key(i), Limit: cur, Cost: 1}}
		if tc.with != nil {
			call = append(call, sluice.Check{Key: key(i), Limit: *tc.with, Cost: 1})
		}
		out := apply(call...)
		if refused := !out[0].Allowed || len(out) > 1 && !out[1].Allowed; !refused || out[0].Remaining != 3-tc.spent {
			t.Fatalf("%s: after the reload %+v, want the call refused with %d of %v left", tc.name, out, 3-tc.spent, cur)
		}
	}
	pass()
	for i, tc := range cases {
		cur := tc.cur.Named("quota")
		if st := apply(sluice.Check{Key: key(i), Limit: cur, Cost: 0})[0]; st.Remaining != 3-tc.spent {
			t.Errorf("%s: past the old limit's expiry, %d of %v left, want %d (%d spent within its window)",
				tc.name, st.Remaining, cur, 3-tc.spent, tc.spent)
		}
	}
}
