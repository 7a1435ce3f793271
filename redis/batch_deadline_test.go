package redis_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/faultproxy"
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

// A caller whose own deadline is shorter than a round trip to Redis gives
// up, and that is its own failure, never counted against the primary
// (failover.Stats.StoreErrors): the run it shares with patient callers is
// bounded by their store deadlines, not by its context, so those calls are
// decided by a Redis that answers each run in a hundredth of the store's
// timeout. (A run ended by the hasty caller's deadline would fail them as
// store errors: counted, fed to the breaker, and here denied by
// on_store_error.)
// Envoy's rate limit filter sends a deadline of its own with every call,
// 20 ms by default, so a server serving Envoy and HTTP callers mixes the
// two.
func TestAHastyCallerDoesNotFailThePatientCallersOfItsBatch(t *testing.T) {
	g, proxy := openProxiedGuarded(t)
	// 10 ms each way: a round trip of about 20 ms, a 100th of the timeout.
	proxy.SetLatency(10 * time.Millisecond)
	before := g.Failover().Stats()
	lim := sluice.FixedWindow(1_000_000_000, time.Hour)
	stop := make(chan struct{})
	var hasty sync.WaitGroup
	for i := range 6 { // a deadline shorter than a round trip
		hasty.Go(func() {
			out := make([]sluice.Status, 1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				g.Apply(ctx, []sluice.Check{{Key: "hasty-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, out)
				cancel()
				time.Sleep(time.Millisecond)
			}
		})
	}
	var calls, failed atomic.Int64
	var patient sync.WaitGroup
	for i := range 8 { // no deadline of their own
		patient.Go(func() {
			out := make([]sluice.Status, 1)
			for range 40 {
				err := g.Apply(context.Background(), []sluice.Check{{Key: "patient-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, out)
				calls.Add(1)
				if err != nil || out[0].Unavailable || !out[0].Allowed {
					failed.Add(1)
				}
			}
		})
	}
	patient.Wait()
	close(stop)
	hasty.Wait()
	after := g.Failover().Stats()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d calls without a deadline of their own were not decided by Redis: the hasty callers' deadlines ended their runs",
			n, calls.Load())
	}
	if n := after.StoreErrors - before.StoreErrors; n > 0 {
		t.Errorf("%d store errors counted while Redis answered every run within its timeout", n)
	}
}

// A queued call is failed unsent for lack of time only when less than a
// quarter of the store's timeout is left before its store deadline, never
// for its caller's shorter deadline: callers that merely bring a deadline
// shorter than that quarter (60 ms against a 2 s timeout, where Redis
// answers in about 4 ms) are decided, and count no store error. (Failed
// so, while their contexts are live, they would count as store errors,
// open the breaker of a healthy Redis for everyone and be denied by
// on_store_error.)
func TestShortCallerDeadlinesDoNotFailQueuedCalls(t *testing.T) {
	g, proxy := openProxiedGuarded(t)
	proxy.SetLatency(2 * time.Millisecond)
	before := g.Failover().Stats()
	lim := sluice.FixedWindow(1_000_000_000, time.Hour)
	var calls, early atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			out := make([]sluice.Status, 1)
			for range 40 {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
				err := g.Apply(ctx, []sluice.Check{{Key: "short-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, out)
				if ctx.Err() == nil && (err != nil || out[0].Unavailable) {
					early.Add(1)
				}
				cancel()
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	after := g.Failover().Stats()
	if n := after.StoreErrors - before.StoreErrors; n > 0 {
		t.Errorf("%d store errors counted against a Redis that answers in about 4 ms, from callers with a 60 ms deadline", n)
	}
	if n := early.Load(); n > 0 {
		t.Errorf("%d of %d calls failed or denied by on_store_error while their caller's deadline had not come", n, calls.Load())
	}
}

// A batched call alone in its run is bounded by its caller's context, as a
// call that is not batched: cancelled while Redis does not answer, it
// returns at once with context.Canceled, not when the store's timeout ends
// the run. (The client's connections are made first: rueidis sends each
// call on one of a few connections picked at random and makes one when
// first used, its handshake bounded by the deadline of the call that needs
// it, not by its cancellation; see batcher.apply.)
func TestACallAloneInItsRunEndsWithItsContext(t *testing.T) {
	const timeout = 2 * time.Second
	srv := redistest.Standalone(t)
	st := dialWithin(t, redis.Options{Addrs: []string{srv.Addr}, Timeout: timeout}, 5*time.Second)
	defer st.Close()
	check := sluice.Check{Key: "alone", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	// 64 decisions in a row miss one of 4 connections with a chance of 1 in 10⁸.
	for range 64 {
		if !decidesWithin(st, check, 5*time.Second) {
			t.Fatal("no decision made by Redis in 5 s")
		}
	}
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	err := st.Apply(ctx, []sluice.Check{check}, make([]sluice.Status, 1))
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) || errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("cancelled during its run: %v, want context.Canceled", err)
	}
	if took > timeout/2 {
		t.Errorf("cancelled after 100 ms during its run, returned after %v: its run outlived its context", took)
	}
}

// openProxiedGuarded opens a guarded store (on_store_error deny, a 2 s
// Timeout) on a standalone Redis behind a proxy, once Redis decides.
func openProxiedGuarded(t *testing.T) (*redis.Guarded, *faultproxy.Proxy) {
	t.Helper()
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{proxy.Addr()}, Instances: 1,
		OnStoreError: failover.Deny, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	out := make([]sluice.Status, 1)
	warm := sluice.Check{Key: "warm", Limit: sluice.FixedWindow(1_000_000_000, time.Hour), Cost: 1}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := g.Apply(context.Background(), []sluice.Check{warm}, out)
		if err == nil && !out[0].Unavailable {
			return g, proxy
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis does not decide: %v %+v", err, out[0])
		}
	}
}
