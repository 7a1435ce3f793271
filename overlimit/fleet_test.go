package overlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// Two instances, each with its own cache, share one store. A concurrency
// unit comes back when the work holding it ends, on whichever instance
// ran it: a release on one instance must not leave the other refusing
// what the store admits until the oldest lease would have expired.
func TestOverLimitCacheNeverRefusesAUnitAnotherInstanceReleased(t *testing.T) {
	clk := storetest.NewClock()
	mem := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	a := sluice.NewLimiter(overlimit.New(mem, overlimit.Options{Clock: clk.Now}))
	b := sluice.NewLimiter(overlimit.New(mem, overlimit.Options{Clock: clk.Now}))
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}

	held, err := allow(a, context.Background(), checks...)
	if err != nil || !held.Allowed {
		t.Fatalf("instance a: allowed %v, err %v; want the one unit", held.Allowed, err)
	}
	if d, err := allow(b, context.Background(), checks...); err != nil || d.Allowed {
		t.Fatalf("instance b while a holds the unit: allowed %v, err %v; want refused", d.Allowed, err)
	}
	clk.Advance(time.Millisecond)
	if err := a.Release(context.Background(), checks, &held); err != nil {
		t.Fatalf("instance a: Release: %v", err)
	}
	if d, err := allow(b, context.Background(), checks...); err != nil || !d.Allowed {
		t.Fatalf("instance b after a released the unit: allowed %v (RetryAfter %v), err %v; the store admits it",
			d.Allowed, d.RetryAfter, err)
	}
}

// Two instances share one store. Capacity that comes back other than with
// time on one instance (an operator's reset there, a refund) reaches the
// other's cache by no call: that cache refuses what the store admits for
// at most DefaultMaxAge, not until the remembered wait ends (here the
// hour's end).
func TestOverLimitCacheForgetsARefusalAfterMaxAge(t *testing.T) {
	clk := storetest.NewClock()
	mem := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	cacheA := overlimit.New(mem, overlimit.Options{Clock: clk.Now})
	a, b := sluice.NewLimiter(cacheA), sluice.NewLimiter(overlimit.New(mem, overlimit.Options{Clock: clk.Now}))
	l := sluice.FixedWindow(10, time.Hour)
	check := sluice.Check{Key: "k", Limit: l, Cost: 1}
	for range 10 {
		if d, err := allow(a, context.Background(), check); err != nil || !d.Allowed {
			t.Fatalf("instance a: %+v, %v", d, err)
		}
	}
	if d, err := allow(b, context.Background(), check); err != nil || d.Allowed {
		t.Fatalf("instance b on a spent key: %+v, %v; want refused", d, err)
	}
	// The operator resets the key through instance a, as redis.Guarded.Reset
	// does: the store's state and a's cache.
	mem.Reset("k", []sluice.Limit{l})
	cacheA.Invalidate("k")
	clk.Advance(time.Second) // DefaultMaxAge
	if d, err := allow(b, context.Background(), check); err != nil || !d.Allowed {
		t.Fatalf("instance b a second after the reset: %+v, %v; the store admits it", d, err)
	}
}
