package sluice_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Leases pass through the over-limit cache and the failover to the store
// that holds them, and a release drops the key's remembered denial.
func TestReleaseThroughCacheAndFailover(t *testing.T) {
	remote, local := memory.New(), memory.New()
	defer remote.Close()
	defer local.Close()
	cache := sluice.NewOverLimitCache(remote, sluice.OverLimitOptions{})
	store, err := sluice.NewFailover(cache, local, sluice.FailoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.NewLimiter(store)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	first, err := lim.Allow(ctx, checks...)
	if err != nil || !first.Allowed {
		t.Fatalf("first: %+v %v", first, err)
	}
	if d, _ := lim.Allow(ctx, checks...); d.Allowed {
		t.Fatal("second admitted while the first holds the only slot")
	}
	if err := lim.Release(ctx, checks, &first); err != nil {
		t.Fatal(err)
	}
	if d, _ := lim.Allow(ctx, checks...); !d.Allowed {
		t.Fatal("the released slot is still held (or the cache still remembers the denial)")
	}
}
