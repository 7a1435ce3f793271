package memory

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A lease book evicted while it holds a lease that has not expired (which
// the rule never does: see judge) is noted as a Reset is, at its newest
// lease's stamp: the book its key builds since stamps its leases after it,
// and giving back a lease of the evicted book frees none of them, so a
// limit of 2 holds at most 2 requests taken since.
func TestAnEvictedBookInFlightIsNotedAsAReset(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC) // stands still
	s := New(WithSweepInterval(0), WithClock(func() time.Time { return at }))
	defer s.Close()
	ctx := context.Background()
	limit := sluice.Concurrency(2, time.Hour).Named("conn")
	checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
	take := func() (int64, bool) {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := s.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Lease, out[0].Allowed
	}
	old, ok := take()
	if !ok {
		t.Fatal("the first lease refused")
	}
	h := s.keyHash("client")
	sh := &s.shards[s.shardIndex(h)]
	sh.mu.Lock()
	lr := s.limits.find(&limit)
	p, _, held := sh.locate(h, lr)
	if !held || p.slot != sideSlot {
		sh.mu.Unlock()
		t.Fatalf("the book is not held beside the array: %+v, %v", p, held)
	}
	book := sh.side[h][sh.sideIndex(h, lr.ref)].state()
	sh.noteEvicted(h, lr, &book, s.clock.notBefore())
	sh.forgetAt(h, lr, p)
	sh.mu.Unlock()

	inFlight := 0
	for range 2 {
		if lease, ok := take(); ok {
			inFlight++
			if lease <= old {
				t.Errorf("a lease taken after the eviction stamped %d, not after the evicted book's %d", lease, old)
			}
		}
	}
	if err := s.Release(ctx, checks, []int64{old}); err != nil {
		t.Fatal(err)
	}
	if _, ok := take(); ok {
		inFlight++
	}
	if inFlight > 2 {
		t.Errorf("%d leases of Concurrency(2, 1h) held at once, all taken after the eviction", inFlight)
	}
}
