package redis

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// Two bucket leases given back out of order must not give back units the
// bucket had refilled. A lease's undo mark recorded what the bucket
// missed before its take (m0), so that the undo gave all its units back
// until the bucket, without it, would have been full again (m0 refilled);
// but that m0 counted an earlier lease, and once that one was given back
// the bucket without the later lease was full sooner: the later lease's
// give-back then returned units that had refilled, and the bucket
// admitted them again (the fleet test caught 16 units admitted beyond
// the limit). Replaying what was spent through one exact bucket bounds
// what the shared state may have left.
func TestBucketLeasesGivenBackOutOfOrderReturnNoRefilledUnits(t *testing.T) {
	t.Parallel()
	clock := conformance.NewClock(conformance.DefaultStart)
	s := New(redistest.Standalone(t).Client(t), WithTimeForTesting(clock.Now), WithTimeout(testTimeout))
	p, ok := planLease(sluice.TokenBucket(100, time.Second), time.Hour)
	if !ok {
		t.Fatal("a token bucket of 100 per second is not leased")
	}
	ctx := context.Background()
	const key = "out-of-order"
	var spent []struct{ at, cost int64 } // what the instances admitted
	apply := func(cost int64) {
		t.Helper()
		out := make([]sluice.Status, 1)
		if _, err := s.apply(ctx, []sluice.Check{{Key: key, Limit: p.shared, Cost: cost}}, out, nil); err != nil || !out[0].Allowed {
			t.Fatalf("%d units at %d: %+v, %v", cost, clock.Micros(), out[0], err)
		}
		spent = append(spent, struct{ at, cost int64 }{clock.Micros(), cost})
	}
	type taken struct {
		c    sluice.Check
		mark string
		at   int64
	}
	take := func(units int64) taken {
		t.Helper()
		c := sluice.Check{Key: key, Limit: p.shared, Cost: units}
		out := make([]sluice.Status, 1)
		g, err := s.apply(ctx, []sluice.Check{c}, out, nil)
		if err != nil || !out[0].Allowed {
			t.Fatalf("a lease of %d units at %d: %+v, %v", units, clock.Micros(), out[0], err)
		}
		return taken{c, p.mark(g), g}
	}
	giveBack := func(l taken) {
		t.Helper()
		if _, err := s.giveBack(ctx, []sluice.Check{l.c}, []string{l.mark}, []int64{l.at}); err != nil {
			t.Fatal(err)
		}
	}

	apply(30)
	x := take(10)
	clock.Advance(100 * time.Millisecond)
	y := take(8)
	clock.Advance(100 * time.Millisecond)
	giveBack(x) // none of it spent
	clock.Advance(190 * time.Millisecond)
	apply(20)
	clock.Advance(5 * time.Millisecond)
	giveBack(y) // none of it spent

	out := make([]sluice.Status, 1)
	if _, err := s.apply(ctx, []sluice.Check{{Key: key, Limit: p.shared}}, out, nil); err != nil {
		t.Fatal(err)
	}
	var st sluice.State
	for _, a := range spent {
		st, _ = storetest.Decided(p.shared.Decide(st, a.at, a.cost))
	}
	_, exact := storetest.Decided(p.shared.Decide(st, clock.Micros(), 0))
	if out[0].Remaining > exact.Remaining {
		t.Errorf("the shared bucket has %d units left after both leases went back unspent; one that saw only what was spent has %d",
			out[0].Remaining, exact.Remaining)
	}
}
