package redis_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A call that waits for a batch (while DefaultBatchRuns scripts are in
// flight) returns by its own Timeout, not a Timeout after its batch is
// sent: with Redis stalled, 6 calls queued 10 ms after two runs began
// would otherwise, when those runs time out, lead a run of their own
// bounded by a fresh Timeout, and return two Timeouts less 10 ms after
// they started: 390 ms on the Timeout of 200 ms here, which leaves room
// below its bound for a loaded machine's scheduling.
func TestABatchedCallReturnsByItsOwnTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	srv := redistest.Standalone(t)
	st := dialWithin(t, redis.Options{Addrs: []string{srv.Addr}, Timeout: timeout}, 5*time.Second)
	defer st.Close()
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	if !decidesWithin(st, check, 5*time.Second) {
		t.Fatal("no decision made by Redis in 5 s")
	}
	srv.Pause()
	defer srv.Resume()
	// Each of 5 rounds keeps its slowest call; the best of those rounds is
	// judged, as a loaded machine delays some rounds, and the fault
	// delays every one.
	var mu sync.Mutex
	best := time.Duration(1<<63 - 1)
	var wg sync.WaitGroup
	for range 5 {
		var worst time.Duration
		for i := range 8 {
			if i == 2 { // two runs in flight: the calls to come queue
				time.Sleep(10 * time.Millisecond)
			}
			wg.Go(func() {
				out := make([]sluice.Status, 1)
				start := time.Now()
				st.Apply(context.Background(), []sluice.Check{check}, out)
				took := time.Since(start)
				mu.Lock()
				worst = max(worst, took)
				mu.Unlock()
			})
		}
		wg.Wait()
		t.Logf("slowest call of the round: %v", worst)
		best = min(best, worst)
	}
	// The Timeout plus scheduling noise on a busy machine.
	if best > timeout*3/2 {
		t.Errorf("in every round a call returned after %v or more, past its Timeout of %v", best, timeout)
	}
}
