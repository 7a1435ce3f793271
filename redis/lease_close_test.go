package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// Close gives back the leases it holds within a bound of time even when
// Redis does not answer and the store has no timeout of its own
// (Options.Timeout < 0: calls are bounded by their caller's context): a
// process shutting down must not hang on its leases.
func TestLeasedCloseIsBoundedWhenRedisDoesNotAnswer(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local, Timeout: -1,
		Lease: redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	c := sluice.Check{Key: "closing", Limit: sluice.FixedWindow(10_000, 400*24*time.Hour), Cost: 1}
	spendN(t, g, c, 40)
	if held := settled(t, g.Leases()).Held; held < 1 {
		t.Fatalf("%d units of lease held, want a lease to give back on Close", held)
	}
	srv.Pause()
	defer srv.Resume()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		g.Close()
		close(done)
	}()
	select {
	case <-done:
		t.Logf("Close returned %v after it was called", time.Since(start))
	case <-time.After(20 * time.Second):
		t.Fatalf("Close has not returned 20 s after it was called, with Redis stopped; leases %+v", g.Leases().Stats())
	}
}
