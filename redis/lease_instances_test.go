package redis_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// Four instances (each Open's store with leases) × 64 goroutines, on one
// hot key per leasable algorithm, twice as many calls as the limit admits:
// counted from outside, the fleet admits no more than the promise — Q per
// window, or a bucket's burst and what it refills while the test runs —
// and at least 90% of it.
func TestLeasedInstancesKeepThePromise(t *testing.T) {
	t.Parallel()
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Standalone(t)
		leasedFleet(t, redis.Options{Addrs: []string{srv.Addr}})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.Cluster(t)
		leasedFleet(t, redis.Options{Mode: redis.ModeCluster, Addrs: c.Addrs()})
	})
}

func leasedFleet(t *testing.T, o redis.Options) {
	const q, instances, callers = 2000, 4, 64
	limits := []sluice.Limit{sluice.FixedWindow(q, time.Hour), sluice.SlidingCounter(q, time.Hour),
		sluice.TokenBucket(q, time.Hour), sluice.GCRA(q, time.Hour), sluice.LeakyBucket(q, time.Hour)}
	// Deny whatever Redis cannot decide in time: the local fallback's own
	// bounds (package documentation, Failover) are not what is tested here.
	o.Timeout, o.Instances, o.OnStoreError = testTimeout, instances, failover.Deny
	o.Lease = redis.LeaseOptions{Mode: redis.LeaseAuto}
	ctx := context.Background()
	fleet := make([]*redis.Guarded, instances)
	for i := range fleet {
		g, err := redis.Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		fleet[i] = g
		t.Cleanup(func() { g.Close() })
	}
	run := time.Now().UnixNano()
	admitted := make([]atomic.Int64, len(limits))
	start := time.Now()
	var wg sync.WaitGroup
	for i := range instances * callers {
		g := fleet[i%instances]
		wg.Go(func() {
			out := make([]sluice.Status, 1)
			for range 2 * q / callers / instances {
				for j, l := range limits {
					c := sluice.Check{Key: fmt.Sprintf("fleet-%d-%v", run, l.Algorithm()), Limit: l, Cost: 1}
					if err := g.Apply(ctx, []sluice.Check{c}, out); err != nil {
						t.Error(err)
						return
					}
					if out[0].Allowed {
						admitted[j].Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	// Windows of an hour aligned to the epoch: a run that crosses an hour
	// may admit two windows' worth.
	windows := int64(1)
	if start.Truncate(time.Hour) != time.Now().Truncate(time.Hour) {
		windows = 2
	}
	var local, calls, fallback int64
	for _, g := range fleet {
		s := g.Leases().Stats()
		local, calls = local+s.Local, calls+s.Calls
		fallback += g.Failover().Stats().FallbackDecisions
	}
	for j, l := range limits {
		promise := windows * q
		if l.Algorithm() != sluice.AlgorithmFixedWindow && l.Algorithm() != sluice.AlgorithmSlidingCounter {
			promise = q + int64(elapsed.Seconds()*q/3600) + 1
		}
		got := admitted[j].Load()
		t.Logf("%v: admitted %d of a promise of %d (%.1f%%)", l.Algorithm(), got, promise, 100*float64(got)/float64(promise))
		if got > promise {
			t.Errorf("%v: the fleet admitted %d, over its promise of %d", l.Algorithm(), got, promise)
		}
		if got < q*9/10 {
			t.Errorf("%v: the fleet admitted %d at twice the limit, under 90%% of %d", l.Algorithm(), got, q)
		}
	}
	t.Logf("%d of %d calls decided from leases, %d refused by on_store_error (%v)", local, calls, fallback, elapsed)
}
