package memory_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A store keeps the first 64 parameter sets of a limit name to rank its
// states by. Keys with quotas of their own under a plan's limit name
// (config's per-key quotas) are how a name meets more. The 65th set's
// state is one the kept sets cannot tell from their own: a window's ends
// where theirs does whatever the quantity, and a bucket's debt is a time
// that every rate reads alike. Judged by a kept set of 1,000 or more, its
// client, refused at 10 of 10, would look hardly used and be the first
// evicted by a flood of new keys, and admitted again with nothing
// refilled. The package doc: "Evicting a state never frees a client its
// limit refuses".
func TestAParameterSetBeyondTheKeptOnesNeverFreesItsRefusedClient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kept   func(q int64) sluice.Limit
		victim sluice.Limit
	}{
		{"fixed window", func(q int64) sluice.Limit { return sluice.FixedWindow(q, time.Minute) }, sluice.FixedWindow(10, time.Minute)},
		{"sliding counter", func(q int64) sluice.Limit { return sluice.SlidingCounter(q, time.Minute) }, sluice.SlidingCounter(10, time.Minute)},
		{"sliding log", func(q int64) sluice.Limit { return sluice.SlidingLog(q, time.Minute) }, sluice.SlidingLog(10, time.Minute)},
		// A bucket's debt of a minute is all of the victim's burst, a
		// sixtieth of a kept set's.
		{"token bucket", func(q int64) sluice.Limit { return sluice.TokenBucket(q, time.Hour) }, sluice.TokenBucket(10, time.Minute)},
		{"GCRA", func(q int64) sluice.Limit { return sluice.GCRA(q, time.Hour) }, sluice.GCRA(10, time.Minute)},
		{"leaky bucket", func(q int64) sluice.Limit { return sluice.LeakyBucket(q, time.Hour) }, sluice.LeakyBucket(10, time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store, lim, _ := newStore(t, memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0))
			var d sluice.Decision
			ask := func(key string, l sluice.Limit, cost int64) bool {
				t.Helper()
				if err := lim.Allow(ctx, []sluice.Check{{Key: key, Limit: l, Cost: cost}}, &d); err != nil {
					t.Fatal(err)
				}
				return d.Allowed
			}
			for i := range 64 { // the sets kept
				ask("customer-"+strconv.Itoa(i), tc.kept(1000+int64(i)).Named("per-minute"), 1)
			}
			victim := tc.victim.Named("per-minute")
			if !ask("victim", victim, 10) || ask("victim", victim, 1) {
				t.Fatalf("the victim was not admitted 10 of 10, then refused: %+v", d.Statuses[0])
			}
			// A flood of new keys of another limit; the clock stands
			// still: the victim gets nothing back. The others' states,
			// which admit more under any set, still make room for it.
			flood := sluice.FixedWindow(5, time.Hour).Named("login")
			admitted := 0
			for i := range 200 {
				if !ask("flood-"+strconv.Itoa(i), flood, 1) {
					t.Fatalf("new key %d refused: %+v; %+v", i, d.Statuses[0], store.Stats())
				}
				if ask("victim", victim, 1) {
					admitted++
				}
			}
			if admitted > 0 {
				t.Errorf("the victim, refused at 10 of 10, was admitted %d more with nothing refilled after a flood of new keys; %+v",
					admitted, store.Stats())
			}
		})
	}
}
