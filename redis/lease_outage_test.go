package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// What the local fallback admitted while Redis could not answer is
// charged to Redis before Redis decides the key again (see Failover in
// the package documentation), leases or not: an instance whose takes
// reached a Redis that is back, while its failover still decided locally
// and owed, admitted both what it owed and all of Redis's quota.
func TestLeasedTakesWaitForTheFallbacksCharge(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	// One failure opens the breaker for 3 s: Redis is back long before the
	// failover asks it again, and the leases' own pause after a failed
	// take (500 ms) has passed.
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local, Timeout: 100 * time.Millisecond,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: 3 * time.Second},
		Lease:   redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	const quota = 100
	// A window no run of the test crosses the end of (an hour's did, now
	// and then, and admitted the next window's quota as it should).
	c := sluice.Check{Key: "owed", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}

	srv.Pause()
	local := spendN(t, g, c, 60)
	srv.Resume()
	if local != 60 {
		t.Fatalf("with Redis stopped the local fallback admitted %d of 60 (its share is the whole %d)", local, quota)
	}
	time.Sleep(700 * time.Millisecond)
	admitted := local + spendN(t, g, c, 2*quota)
	// Past the breaker's period and the return period that follows it.
	deadline := time.Now().Add(3*time.Second + 4*3*time.Second + time.Second)
	for time.Now().Before(deadline) {
		admitted += spendN(t, g, c, 10)
		time.Sleep(50 * time.Millisecond)
	}
	if admitted > quota {
		t.Errorf("admitted %d in the window of a limit of %d (%d by the local fallback while Redis was stopped); failover %+v, leases %+v",
			admitted, quota, local, g.Failover().Stats(), g.Leases().Stats())
	}
}
