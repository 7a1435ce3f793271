package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A lease's units and the local fallback's share are disjoint: Redis
// counted the lease when it was taken, and the fallback starts from what
// Redis said was left after it. An instance alone (its share the whole
// limit) that holds a lease when Redis stops, spends it and its fallback
// (a call costing more than the lease holds goes to the fallback, the
// next cheap one to the lease), and goes on once Redis is back through
// the failover's charge and return, admits no more than the limit in the
// window.
func TestALeaseAndTheFallbackNeverAdmitTheSameUnits(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local, Timeout: 100 * time.Millisecond,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: time.Second},
		Lease:   redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	const quota = 200
	c := sluice.Check{Key: "lease-and-fallback", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}
	big := c
	big.Cost = 7
	// Spent until a lease holds units: on a loaded machine a slow first
	// call opens the breaker (Failures: 1) and the next second's calls are
	// the fallback's, with no take.
	admitted := spendN(t, g, c, 60)
	held := settled(t, g.Leases()).Held
	for deadline := time.Now().Add(10 * time.Second); held < 5 && time.Now().Before(deadline); held = settled(t, g.Leases()).Held {
		time.Sleep(20 * time.Millisecond)
		admitted += spendN(t, g, c, 5)
	}
	if held < 5 {
		t.Fatalf("%d units of lease held when Redis stops, want a lease to spend through the outage", held)
	}

	srv.Pause()
	units := 0
	for range 40 {
		units += spendN(t, g, c, 1) + 7*spendN(t, g, big, 1)
	}
	srv.Resume()
	during := g.Leases().Stats()
	if g.Failover().Stats().FallbackDecisions == 0 || during.Spent-int64(admitted) < 1 {
		t.Fatalf("want units from the lease and from the fallback during the outage: failover %+v, leases %+v",
			g.Failover().Stats(), during)
	}
	// Past the breaker's period and the return period that follows it.
	for end := time.Now().Add(1*time.Second + 4*time.Second + time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		units += spendN(t, g, c, 5) + 7*spendN(t, g, big, 1)
	}
	if total := admitted + units; total > quota {
		t.Errorf("admitted %d units in the window of a limit of %d (%d held as lease when Redis stopped); failover %+v, leases %+v",
			total, quota, held, g.Failover().Stats(), g.Leases().Stats())
	}
}
