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
	// At least a second of contention, and on until 100 calls are
	// admitted: 20 times the slots, which 10 s leases never given back
	// could not admit. A loaded machine may need more than the second.
	const want = 100
	begin := time.Now()
	more := func() bool {
		elapsed := time.Since(begin)
		return elapsed < time.Second || admitted.Load() < want && elapsed < 30*time.Second
	}
	for i := range 4 {
		lim := sluice.NewLimiter(redis.New(srv.Client(t), redis.WithTimeout(testTimeout)))
		for range 16 {
			wg.Go(func() {
				ctx := context.Background()
				checks := []sluice.Check{{Key: "worker-pool", Limit: limit, Cost: 1 + int64(i%2)}}
				for more() {
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
	if admitted.Load() < want {
		t.Errorf("only %d calls admitted in %v: leases are not given back", admitted.Load(), time.Since(begin))
	}
	t.Logf("%d calls admitted in %v, at most %d units in flight", admitted.Load(), time.Since(begin).Round(time.Millisecond), peak.Load())
}
