package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A caller that gives up while its call takes a lease says nothing of
// Redis: the next call, on another key, takes its lease as usual. A take
// ended by its caller's context paused every take of the store for half a
// second, as a take Redis failed does, and the checks of every key went
// to Redis one by one meanwhile.
func TestACallerGivingUpDuringATakeDoesNotPauseLeasing(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local})
	limit := sluice.FixedWindow(1000, 400*24*time.Hour)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := make([]sluice.Status, 1)
	if err := g.Apply(ctx, []sluice.Check{{Key: "gone", Limit: limit, Cost: 1}}, out); err == nil {
		t.Fatalf("a call whose caller gave up: %+v, want an error", out[0])
	}
	before := settled(t, g.Leases())
	if spendN(t, g, sluice.Check{Key: "next", Limit: limit, Cost: 1}, 1) != 1 {
		t.Fatal("the next call refused")
	}
	if after := settled(t, g.Leases()); after.Leases == before.Leases {
		t.Errorf("the next call on another key took no lease: before %+v, after %+v", before, after)
	}
}
