package redis_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// Instances sharing a concurrency limit through Redis never hold more than
// its quantity at once: a lease is counted from when its call is admitted
// until just before it is released, which can only undercount what Redis
// holds.
func TestConcurrencyLeasesBoundWorkInFlight(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	limit := sluice.Concurrency(5, 10*time.Second)
	var inFlight, peak, admitted atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Second)
	for i := range 4 {
		lim := sluice.NewLimiter(redis.New(srv.Client(t), redis.WithTimeout(testTimeout)))
		for range 16 {
			wg.Go(func() {
				ctx := context.Background()
				checks := []sluice.Check{{Key: "worker-pool", Limit: limit, Cost: 1 + int64(i%2)}}
				for time.Now().Before(deadline) {
					d, err := allow(lim, ctx, checks...)
					if err != nil {
						t.Error(err)
						return
					}
					if !d.Allowed {
						continue
					}
					admitted.Add(1)
					n := inFlight.Add(checks[0].Cost)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					time.Sleep(time.Millisecond) // the work
					inFlight.Add(-checks[0].Cost)
					if err := lim.Release(ctx, checks, &d); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if peak.Load() > 5 {
		t.Errorf("%d units in flight at once, limit 5", peak.Load())
	}
	if admitted.Load() < 100 {
		t.Errorf("only %d calls admitted in a second: leases are not given back", admitted.Load())
	}
	t.Logf("%d calls admitted, at most %d units in flight", admitted.Load(), peak.Load())
}
