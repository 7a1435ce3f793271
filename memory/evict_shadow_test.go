package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// spendInShadow makes n clients each spend trial, a limit of 1 in shadow
// mode, and ask once more: a shadow limit admits both calls.
func spendInShadow(t *testing.T, lim *sluice.Limiter, trial sluice.Limit, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		key := fmt.Sprint("client-", i)
		for range 2 { // the second is over the trial: its shadow check refuses, the call is admitted
			d, err := allow(lim, ctx, sluice.Check{Key: key, Limit: trial, Cost: 1})
			if err != nil || !d.Allowed {
				t.Fatalf("%s: admitted=%v err=%v; a shadow limit never refuses", key, d.Allowed, err)
			}
		}
	}
}

// A limit only ever decided in shadow mode refuses no one, so its states
// at their limit hold no client back: a full store evicts them for a new
// key as it does states that still admit, and never refuses the newcomer
// for want of room because of them. A trial limit in shadow mode never
// turns into 429s for newcomers, whatever its algorithm.
func TestShadowStatesNeverKeepANewcomerOut(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(1, time.Hour), sluice.SlidingCounter(1, time.Hour), sluice.SlidingLog(1, time.Hour),
		sluice.GCRA(1, time.Hour), sluice.TokenBucket(1, time.Hour), sluice.LeakyBucket(1, time.Hour),
		sluice.Concurrency(1, time.Hour), // leases taken and never given back
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(16), memory.WithSweepInterval(0))
			spendInShadow(t, lim, l.Named("trial").WithShadow(true), 16)
			before := store.Stats()
			enforced := sluice.FixedWindow(100, time.Hour).Named("per-hour")
			d, err := allow(lim, context.Background(), sluice.Check{Key: "newcomer", Limit: enforced, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if after := store.Stats(); !d.Allowed || after.NoRoom != before.NoRoom || after.Evictions != before.Evictions+1 {
				t.Errorf("a newcomer's first request under a per-hour limit of 100: admitted=%v (RetryAfter %v), stats %+v then %+v; "+
					"want admitted, one shadow state evicted, none refused for want of room", d.Allowed, d.RetryAfter, before, after)
			}
		})
	}
}

// Once a limit decided in shadow mode is checked in enforcing mode, on a
// key the store holds or on a new one, whether that call is decided
// holding the key's entry only or under the shard's mutex (a sliding log's
// always is), its states may refuse their clients: from that check on,
// those at their limit are never evicted, and a full store of them refuses
// a newcomer for want of room.
func TestAShadowLimitOnceEnforcedKeepsItsRefusedClients(t *testing.T) {
	ctx := context.Background()
	window := sluice.FixedWindow(1, time.Hour).Named("trial")
	log := sluice.SlidingLog(1, time.Hour).Named("trial") // a state of 2 units: 8 fill the store
	for _, tc := range []struct {
		name    string
		trial   sluice.Limit
		clients int
		key     string // the key of the first enforcing check
	}{
		{"a window, on a key the store holds", window, 16, "client-0"},
		{"a window, on a new key", window, 16, "newcomer-0"},
		{"a log, on a key the store holds", log, 8, "client-0"},
		{"a log, on a new key", log, 8, "newcomer-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(16), memory.WithSweepInterval(0))
			spendInShadow(t, lim, tc.trial.WithShadow(true), tc.clients)
			if d, err := allow(lim, ctx, sluice.Check{Key: tc.key, Limit: tc.trial, Cost: 1}); err != nil || d.Allowed {
				t.Fatalf("%s's first enforcing check: admitted=%v err=%v; want refused (at its limit, or for want of room)", tc.key, d.Allowed, err)
			}
			before := store.Stats()
			enforced := sluice.FixedWindow(100, time.Hour).Named("per-hour")
			d, err := allow(lim, ctx, sluice.Check{Key: "newcomer", Limit: enforced, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if st := store.Stats(); d.Allowed || st.Evictions != 0 || st.NoRoom != before.NoRoom+1 {
				t.Errorf("newcomer admitted=%v, stats %+v; want refused for want of room, nothing evicted", d.Allowed, st)
			}
			for i := range tc.clients {
				key := fmt.Sprint("client-", i)
				if d, err := allow(lim, ctx, sluice.Check{Key: key, Limit: tc.trial, Cost: 1}); err != nil || d.Allowed {
					t.Errorf("%s, at its limit: admitted=%v err=%v; want refused", key, d.Allowed, err)
				}
			}
		})
	}
}
