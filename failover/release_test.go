package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// Leases pass through the over-limit cache and the failover store to the store
// that holds them, and a release drops the key's remembered denial.
func TestReleaseThroughCacheAndFailover(t *testing.T) {
	remote, local := memory.New(), memory.New()
	defer remote.Close()
	defer local.Close()
	cache := overlimit.New(remote, overlimit.Options{})
	store, err := failover.New(cache, local, failover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.NewLimiter(store)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	first, err := allow(lim, ctx, checks...)
	if err != nil || !first.Allowed {
		t.Fatalf("first: %+v %v", first, err)
	}
	if d, _ := allow(lim, ctx, checks...); d.Allowed {
		t.Fatal("second admitted while the first holds the only slot")
	}
	if err := lim.Release(ctx, checks, &first); err != nil {
		t.Fatal(err)
	}
	if d, _ := allow(lim, ctx, checks...); !d.Allowed {
		t.Fatal("the released slot is still held (or the cache still remembers the denial)")
	}
}
