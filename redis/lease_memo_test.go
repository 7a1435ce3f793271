package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// The local fallback of an instance starts each key from its share of
// what Redis last told it was left, and a take is Redis telling it: an
// instance alone (its share the whole limit) that spent most of a window
// from leases and then lost Redis admits, leases and fallback together,
// no more than the limit (the bound of Failover in the package
// documentation, with no other instance's admissions unheard of).
func TestTheFallbackStartsFromWhatTheLastTakeLeft(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local, Timeout: 100 * time.Millisecond,
		Lease: redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	const quota = 100
	c := sluice.Check{Key: "leased-then-lost", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}
	admitted := spendN(t, g, c, 90)
	settled(t, g.Leases())
	srv.Pause()
	defer srv.Resume()
	admitted += spendN(t, g, c, 2*quota)
	if admitted > quota {
		t.Errorf("admitted %d in the window of a limit of %d, Redis stopped after 90; failover %+v, leases %+v",
			admitted, quota, g.Failover().Stats(), g.Leases().Stats())
	}
}
