package redis_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A Redis that stalls (its process stopped: the kernel still accepts
// connections, nothing answers) is decided around: every call is decided
// by on_store_error and none waits past its Timeout (plus scheduling
// noise), neither while the connection that no longer answers is kept nor
// while new ones are made to a Redis that answers no HELLO. Under deny
// a call is one round trip at most.
func TestAStalledRedisHoldsNoCallPastItsTimeout(t *testing.T) {
	holdsNoCallPastItsTimeout(t, failover.Deny)
}

// holdsNoCallPastItsTimeout has 4 goroutines call Open's store under
// policy while Redis stalls for 3 s, and fails if a call errs or returns
// later than half a Timeout past its Timeout.
func holdsNoCallPastItsTimeout(t *testing.T, policy failover.OnError) {
	srv := redistest.Standalone(t)
	// A Timeout of 400 ms, eight times the default, so that the bound below
	// leaves 200 ms for a loaded machine's scheduling (CI runs the server's
	// tests beside this package on two cores: four calls in flight together
	// once came back 312 ms after they started on a 200 ms Timeout, one
	// stall of the process) while a call that waited a second Timeout (a
	// queued call given a fresh one for its run: about 800 ms) is past it.
	const timeout = 400 * time.Millisecond
	const bound = timeout * 3 / 2
	st, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, OnStoreError: policy, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitFor(t, func() bool { return st.Ping(context.Background()) == nil })

	limit := sluice.FixedWindow(1_000_000_000, time.Hour)
	var calls, errs, late atomic.Int64
	var mu sync.Mutex
	var worst time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			checks := []sluice.Check{{Key: string(rune('a' + g)), Limit: limit, Cost: 1}}
			out := make([]sluice.Status, 1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				err := st.Apply(context.Background(), checks, out)
				took := time.Since(start)
				calls.Add(1)
				if err != nil {
					errs.Add(1)
				}
				if took > bound {
					late.Add(1)
				}
				mu.Lock()
				worst = max(worst, took)
				mu.Unlock()
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	srv.Pause()
	time.Sleep(3 * time.Second)
	srv.Resume()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	t.Logf("%d calls, %d errors, %d past %v, slowest %v; failover %+v", calls.Load(), errs.Load(), late.Load(), bound, worst, st.Failover().Stats())
	if errs.Load() != 0 {
		t.Errorf("%d of %d calls returned an error instead of a fallback decision", errs.Load(), calls.Load())
	}
	if late.Load() != 0 {
		t.Errorf("%d of %d calls returned more than %v after they started, the slowest after %v: past the %v Timeout", late.Load(), calls.Load(), bound, worst, timeout)
	}
}
