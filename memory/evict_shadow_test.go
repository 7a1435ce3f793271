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

// enforceEach makes n clients each take 1 of trial, a limit of 1 in
// enforcing mode: each is admitted, or refused for want of room.
func enforceEach(t *testing.T, lim *sluice.Limiter, trial sluice.Limit, n int) {
	t.Helper()
	for i := range n {
		if _, err := allow(lim, context.Background(), sluice.Check{Key: fmt.Sprint("client-", i), Limit: trial, Cost: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// newcomerAdmitted reports whether a new client's first check under a
// per-hour limit of 100 is admitted, and fails t unless the store evicted
// a state for it (admitted) or refused it for want of room (refused).
func newcomerAdmitted(t *testing.T, store *memory.Store, lim *sluice.Limiter) bool {
	t.Helper()
	before := store.Stats()
	enforced := sluice.FixedWindow(100, time.Hour).Named("per-hour")
	d, err := allow(lim, context.Background(), sluice.Check{Key: "newcomer", Limit: enforced, Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	after := store.Stats()
	if d.Allowed && after.Evictions != before.Evictions+1 || !d.Allowed && after.NoRoom != before.NoRoom+1 {
		t.Fatalf("newcomer admitted=%v, stats %+v then %+v; want one state evicted, or one check refused for want of room", d.Allowed, before, after)
	}
	return d.Allowed
}

// A limit enforced, then rolled back to shadow mode by a reload (the usual
// undo of a rollout that refused too much), refuses no one once a window
// has passed without an enforcing check of it: from then on its states at
// their limit keep no newcomer out of a full store, as those of a limit
// only ever in shadow mode do not, whatever its algorithm. Within that
// window, its states at their limit still keep their clients (see
// TestARolledBackLimitKeepsItsRefusedClientsForAWindow). A client whose
// state is evicted so starts afresh if the limit enforces again.
func TestARolledBackLimitKeepsNoNewcomerOutAfterAWindow(t *testing.T) {
	for _, tc := range []struct {
		trial   sluice.Limit
		clients int
	}{
		{sluice.FixedWindow(1, time.Hour), 16}, {sluice.SlidingCounter(1, time.Hour), 16},
		{sluice.SlidingLog(1, time.Hour), 8}, // a state of 2 units: 8 fill the store
		{sluice.GCRA(1, time.Hour), 16}, {sluice.TokenBucket(1, time.Hour), 16}, {sluice.LeakyBucket(1, time.Hour), 16},
		{sluice.Concurrency(1, time.Hour), 16}, // leases taken and never given back
	} {
		t.Run(tc.trial.Algorithm().String(), func(t *testing.T) {
			store, lim, clock := newStore(t, memory.WithShards(1), memory.WithMaxKeys(16), memory.WithSweepInterval(0))
			trial := tc.trial.Named("trial")
			enforceEach(t, lim, trial, tc.clients)
			// Rolled back: the same limit in shadow mode from now on. The
			// clients go on a window and a few seconds later.
			clock.Advance(time.Hour + 3*time.Second)
			spendInShadow(t, lim, trial.WithShadow(true), tc.clients)
			if !newcomerAdmitted(t, store, lim) {
				t.Errorf("newcomer refused for want of room an hour after 'trial' was last enforced; " +
					"want admitted: every state of the full store is of a limit that refuses no one now")
			}
		})
	}
}

// A limit rolled back to shadow mode keeps its refused clients for its
// window after its last enforcing check: its states at their limit are
// not evicted for a newcomer yet, which a full store refuses for want of
// room.
func TestARolledBackLimitKeepsItsRefusedClientsForAWindow(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithShards(1), memory.WithMaxKeys(16), memory.WithSweepInterval(0))
	trial := sluice.FixedWindow(1, time.Hour).Named("trial")
	enforceEach(t, lim, trial, 16)
	clock.Advance(59 * time.Minute)
	spendInShadow(t, lim, trial.WithShadow(true), 16)
	if newcomerAdmitted(t, store, lim) {
		t.Errorf("newcomer admitted 59 minutes after 'trial', of a window of 1h, was last enforced; want refused for want of room")
	}
}

// A limit checked in enforcing mode less often than once a window, on a
// key the store holds or on a new one, whether that call is decided
// holding the key's entry only or under the shard's mutex (a sliding
// log's always is), keeps its refused clients: each enforcing check keeps
// its states refusing for a window from then on.
func TestAnEnforcedLimitCheckedOnceAWindowKeepsItsRefusedClients(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trial   sluice.Limit
		clients int
		key     string // the key of the enforcing check within the window
	}{
		{"a window, on a key the store holds", sluice.FixedWindow(1, time.Hour), 16, "client-0"},
		{"a log, on a key the store holds", sluice.SlidingLog(1, time.Hour), 8, "client-0"},
		{"a window, on a new key", sluice.FixedWindow(1, time.Hour), 15, "client-15"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, lim, clock := newStore(t, memory.WithShards(1), memory.WithMaxKeys(16), memory.WithSweepInterval(0))
			trial := tc.trial.Named("trial")
			enforceEach(t, lim, trial, tc.clients)
			clock.Advance(50 * time.Minute)
			if _, err := allow(lim, context.Background(), sluice.Check{Key: tc.key, Limit: trial, Cost: 1}); err != nil {
				t.Fatal(err)
			}
			// A new window: the clients spend it in shadow mode (another
			// plan's, under the same name), 70 minutes after the first
			// enforcing checks, 20 after the last.
			clock.Advance(20 * time.Minute)
			spendInShadow(t, lim, trial.WithShadow(true), max(tc.clients, 16))
			if newcomerAdmitted(t, store, lim) {
				t.Errorf("newcomer admitted 20 minutes after an enforcing check of 'trial' (%s); want refused for want of room", tc.name)
			}
		})
	}
}
