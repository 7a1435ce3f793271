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

// A Redis that comes back without its data (restarted without
// persistence) no longer counts the leases it gave: an instance that went
// on spending them admitted them beyond what the new state allowed (119 of
// a limit of 100 after the restart, 19 from a lease the new Redis never
// counted), and the rest it gave back would have been taken out of what
// the new state counted for the other. Once the store has seen the
// restart, what it holds of the old state's leases is neither spent nor
// given back.
func TestLeasesEndWhenRedisComesBackWithoutThem(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	o := redis.Options{Instances: 2, OnStoreError: failover.Local, Lease: redis.LeaseOptions{MaxAge: time.Hour}}
	a, b := openLeased(t, srv, o), openLeased(t, srv, o)
	const quota = 100
	c := sluice.Check{Key: "restart", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}

	for range 10 {
		spendN(t, a, c, 1)
		settled(t, a.Leases())
	}
	held := settled(t, a.Leases()).Held
	if held < 5 {
		t.Fatalf("a holds %d units of lease before the restart, want a lease to lose", held)
	}

	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for _, g := range []*redis.Guarded{a, b} {
		for g.Losses().EmptyRestarts == 0 || g.Ping(context.Background()) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the restart not seen within 10 s: %+v", g.Losses())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	admitted := spendN(t, b, c, 2*quota)
	admitted += spendN(t, a, c, 2*quota)
	time.Sleep(time.Second) // unused leases go back after Idle (250 ms)
	admitted += spendN(t, b, c, quota)
	admitted += spendN(t, a, c, quota)
	if admitted > quota {
		t.Errorf("admitted %d after the restart, for a limit of %d (a held %d units of lease before it); a: leases %+v, failover %+v; b: leases %+v, failover %+v",
			admitted, quota, held, a.Leases().Stats(), a.Failover().Stats(), b.Leases().Stats(), b.Failover().Stats())
	}
}
