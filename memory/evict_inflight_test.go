package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// fillWithRefused fills a one-shard store of 16 states with n keys that
// each refuse from now on (a FixedWindow(1, 1h), spent).
func fillWithRefused(t *testing.T, lim *sluice.Limiter, n int) {
	t.Helper()
	strict := sluice.FixedWindow(1, time.Hour).Named("strict")
	for i := range n {
		if d, _ := allow(lim, context.Background(), sluice.Check{Key: fmt.Sprint("r", i), Limit: strict, Cost: 1}); !d.Allowed {
			t.Fatalf("r%d refused", i)
		}
	}
}

// A lease book holding a lease that has not expired is never evicted while
// another state may be, however many of its leases are free: its leases
// are requests in flight, and a key that started afresh would hold them
// and Quantity more at once (AlgorithmConcurrency promises at most
// Quantity units held at once per key). A full store of refused clients
// refuses the newcomers instead.
func TestEvictionNeverFreesALeaseInFlight(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0))
	ctx := context.Background()
	conc := sluice.Concurrency(2, time.Hour)
	take := func() bool {
		t.Helper()
		d, err := allow(lim, ctx, sluice.Check{Key: "victim", Limit: conc, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	var held int64
	if take() {
		held++ // in flight for the rest of the test: never released
	}
	fillWithRefused(t, lim, 14) // the book counts 2 units: the store is full
	clock.Advance(time.Second)
	loose := sluice.FixedWindow(100, time.Hour).Named("loose")
	for i := range 3 {
		allow(lim, ctx, sluice.Check{Key: fmt.Sprint("new", i), Limit: loose, Cost: 1})
		clock.Advance(time.Millisecond)
		if take() {
			held++
		}
	}
	if held > conc.Quantity() {
		t.Errorf("%d leases of Concurrency(%d, 1h) admitted for one key, none released or expired", held, conc.Quantity())
	}
	if st := store.Stats(); st.Evictions != 0 || st.NoRoom != 3 {
		t.Errorf("stats %+v, want no eviction and the 3 newcomers refused for want of room", st)
	}
}

// A lease given back after a full store's newcomer came frees that lease
// only: the book that holds it is not evicted, so no lease the key takes
// since carries its stamp (Release matches a lease by its stamp and
// units), and the key never holds more than Quantity leases at once.
func TestAReleaseAfterANewcomerFreesOnlyItsOwnLease(t *testing.T) {
	_, lim, _ := newStore(t, memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0))
	ctx := context.Background()
	conc := sluice.Concurrency(2, time.Hour)
	checks := []sluice.Check{{Key: "victim", Limit: conc, Cost: 1}}
	var first sluice.Decision
	if err := lim.Allow(ctx, checks, &first); err != nil || !first.Allowed {
		t.Fatal(err, first.Allowed)
	}
	fillWithRefused(t, lim, 14)
	// The clock stands still: a lease taken now would have first's stamp.
	allow(lim, ctx, sluice.Check{Key: "new", Limit: sluice.FixedWindow(100, time.Hour).Named("loose"), Cost: 1})
	var since int64 // leases taken after the newcomer, none released
	var second sluice.Decision
	if err := lim.Allow(ctx, checks, &second); err != nil {
		t.Fatal(err)
	}
	if second.Allowed {
		since++
	}
	// The first request ends (Release clears the stamps from first).
	stamps := [2]int64{first.Statuses[0].Lease, second.Statuses[0].Lease}
	if err := lim.Release(ctx, checks, &first); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if d, _ := allow(lim, ctx, checks...); d.Allowed {
			since++
		}
	}
	if since > conc.Quantity() {
		t.Errorf("%d leases of Concurrency(%d, 1h) held at once, all taken after the first was given back (first %d, second %d)",
			since, conc.Quantity(), stamps[0], stamps[1])
	}
}

// A state that still admits a check of cost 1 may be evicted, and again
// each time its key has spent afresh: the store keeps no record of it (see
// the package doc's Eviction). What bounds the excess: each eviction takes
// one new state at a full shard, and gives the key back what it had used,
// less than its limit. A client of FixedWindow(10, 1h) that stops one
// short each time, among refused clients, is admitted 9 more per newcomer:
// at most 10 + 9 per newcomer, as its state goes at most once per new
// state of another key (its own new state, when it comes back, evicts the
// newcomer's).
func TestEvictionOfAnAdmittingStateGivesBackWhatItUsedOncePerNewState(t *testing.T) {
	store, lim, clock := newStore(t, memory.WithMaxKeys(16), memory.WithShards(1), memory.WithSweepInterval(0))
	ctx := context.Background()
	quota := sluice.FixedWindow(10, time.Hour).Named("hourly")
	admitted := int64(0)
	spend := func(n int) {
		t.Helper()
		for range n {
			d, err := allow(lim, ctx, sluice.Check{Key: "client", Limit: quota, Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				admitted++
			}
		}
	}
	spend(9)
	fillWithRefused(t, lim, 15)
	clock.Advance(time.Second)
	loose := sluice.FixedWindow(100, time.Hour).Named("loose")
	const newcomers = 5
	for i := range newcomers {
		allow(lim, ctx, sluice.Check{Key: fmt.Sprint("new", i), Limit: loose, Cost: 1})
		clock.Advance(time.Millisecond)
		spend(9)
	}
	if st := store.Stats(); st.Evictions > 2*newcomers || st.NoRoom != 0 {
		t.Errorf("stats %+v, want at most %d evictions (one per new state) and none refused", st, 2*newcomers)
	}
	if bound := quota.Quantity() + 9*newcomers; admitted > bound {
		t.Errorf("%d admitted within one window of FixedWindow(10, 1h) with %d newcomers, want at most %d", admitted, newcomers, bound)
	}
}
