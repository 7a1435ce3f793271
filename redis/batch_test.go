package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// Calls made at the same time are decided in fewer script runs than calls,
// and exactly: a batch decides as the same calls one by one.
func TestConcurrentCallsShareScriptRunsAndStayExact(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	lim := sluice.NewLimiter(New(srv.Client(t), WithTimeout(testTimeout)))
	perHour := sluice.FixedWindow(1000, time.Hour)
	perDay := sluice.GCRA(1500, 24*time.Hour)
	srv.MustDo("CONFIG", "RESETSTAT")
	var admitted atomic.Int64
	var wg sync.WaitGroup
	const workers, each = 64, 50
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				// Two subjects share one hour and one day: keys of different
				// calls meet inside one batch.
				key := "subject-" + strconv.Itoa((g+i)%2)
				d, err := allow(lim, context.Background(), sluice.Check{Key: key, Limit: perHour, Cost: 1}, sluice.Check{Key: "all", Limit: perDay, Cost: 1})
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	// 2 × 1000 per hour, but 1500 per day for both together.
	if got := admitted.Load(); got != 1500 {
		t.Errorf("admitted %d of %d calls, want exactly 1500", got, workers*each)
	}
	stats, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	runs := scriptCalls(stats["cmdstat_evalsha"]) + scriptCalls(stats["cmdstat_eval"])
	t.Logf("%d calls decided in %d script runs", workers*each, runs)
	if runs <= 0 || runs >= workers*each {
		t.Errorf("%d script runs for %d calls from %d goroutines: no batching", runs, workers*each, workers)
	}
}

// scriptCalls reads calls= from an INFO commandstats line.
func scriptCalls(line string) int {
	for _, f := range strings.Split(line, ",") {
		if v, ok := strings.CutPrefix(f, "calls="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// pausedStore returns a store that sends one script run at a time, whose
// first call is held by CLIENT PAUSE for the returned duration, so that the
// calls made meanwhile queue up behind it.
func pausedStore(t *testing.T) (*Store, *redistest.Server) {
	srv := redistest.Standalone(t)
	store := New(srv.Client(t), WithBatching(1), WithTimeout(testTimeout))
	if err := store.Apply(context.Background(), []sluice.Check{{Key: "warm", Limit: sluice.PerSecond(1), Cost: 0}},
		make([]sluice.Status, 1)); err != nil {
		t.Fatal(err) // loads the script
	}
	return store, srv
}

// waitQueued waits until n calls wait in store's queue.
func waitQueued(t *testing.T, store *Store, n int) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		store.batch.mu.Lock()
		got := len(store.batch.queue)
		store.batch.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A call that fails inside a batch (its key holds a corrupt sliding log)
// fails alone: the other calls of the batch are decided.
func TestOneCallFailingInABatchLeavesTheOthersDecided(t *testing.T) {
	t.Parallel()
	store, srv := pausedStore(t)
	l := sluice.SlidingLog(5, time.Second)
	srv.MustDo("HSET", Key("bad", l.Name()), "g", "2", "h", "0", "n", "1", "a", "1", "0", "garbage")
	srv.MustDo("CONFIG", "RESETSTAT")
	srv.MustDo("CLIENT", "PAUSE", "300", "ALL") // holds every command, CONFIG included
	errs := make([]error, 3)
	outs := make([][]sluice.Status, 3)
	var wg sync.WaitGroup
	apply := func(i int, key string) {
		outs[i] = make([]sluice.Status, 1)
		wg.Go(func() {
			errs[i] = store.Apply(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: 1}}, outs[i])
		})
	}
	apply(0, "first") // sent, held by the pause
	waitRunning(t, store)
	apply(1, "bad")
	apply(2, "good")
	waitQueued(t, store, 2)
	wg.Wait()
	if errs[0] != nil || !outs[0][0].Allowed {
		t.Errorf("first call: %v %+v, want allowed", errs[0], outs[0][0])
	}
	if !errors.Is(errs[1], sluice.ErrStoreUnavailable) {
		t.Errorf("call on a corrupt log: %v, want ErrStoreUnavailable", errs[1])
	}
	if errs[2] != nil || !outs[2][0].Allowed || outs[2][0].Remaining != 4 {
		t.Errorf("good call in the same batch: %v %+v, want allowed with 4 left", errs[2], outs[2][0])
	}
	stats, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	if n := scriptCalls(stats["cmdstat_evalsha"]); n != 2 {
		t.Errorf("3 calls took %d script runs, want 2: the first, then the two queued ones together", n)
	}
}

// waitRunning waits until store has a script run in flight.
func waitRunning(t *testing.T, store *Store) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		store.batch.mu.Lock()
		running := store.batch.running
		store.batch.mu.Unlock()
		if running > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no script run in flight")
		}
		time.Sleep(time.Millisecond)
	}
}

// A call whose context ends while it waits for a batch returns the
// context's error and consumes nothing.
func TestACallCancelledWhileQueuedConsumesNothing(t *testing.T) {
	t.Parallel()
	store, srv := pausedStore(t)
	l := sluice.PerSecond(5)
	srv.MustDo("CLIENT", "PAUSE", "300", "ALL")
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := store.Apply(context.Background(), []sluice.Check{{Key: "first", Limit: l, Cost: 1}}, make([]sluice.Status, 1)); err != nil {
			t.Error(err)
		}
	})
	waitRunning(t, store)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- store.Apply(ctx, []sluice.Check{{Key: "gave-up", Limit: l, Cost: 1}}, make([]sluice.Status, 1))
	}()
	waitQueued(t, store, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("cancelled while queued: %v, want context.Canceled", err)
	}
	wg.Wait()
	if n, err := srv.Do("EXISTS", Key("gave-up", "per-second")); err != nil || n != int64(0) {
		t.Errorf("EXISTS of the cancelled call's key: %v %v, want 0: it consumed", n, err)
	}
	waitQueued(t, store, 0)
	store.batch.mu.Lock()
	defer store.batch.mu.Unlock()
	if store.batch.running != 0 {
		t.Errorf("%d runs still counted in flight", store.batch.running)
	}
}

// A key that holds another type than its algorithm keeps — a string where
// a sliding log keeps a hash, a hash where GCRA keeps a string (as sluice
// before 2026-11-30 wrote it) — is a key never seen, replaced on write.
func TestAKeyOfAnotherTypeCountsAsNeverSeen(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	store := New(srv.Client(t), WithTimeout(testTimeout))
	logLimit := sluice.SlidingLog(5, time.Minute).Named("log")
	gcra := sluice.GCRA(5, time.Minute).Named("gcra")
	srv.MustDo("SET", Key("u", "log"), "6 1 2 3")
	srv.MustDo("HSET", Key("u", "gcra"), "g", "6", "t", "1", "a", "2", "b", "3")
	out := make([]sluice.Status, 2)
	err := store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: logLimit, Cost: 1}, {Key: "u", Limit: gcra, Cost: 1}}, out)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range out {
		if !st.Allowed || st.Remaining != 4 {
			t.Errorf("check %d: %+v, want allowed with 4 left, as on a fresh key", i, st)
		}
	}
	for _, k := range []string{Key("u", "log"), Key("u", "gcra")} {
		if ttl, err := srv.Do("PTTL", k); err != nil || ttl.(int64) <= 0 {
			t.Errorf("PTTL %s = %v %v, want a TTL", k, ttl, err)
		}
	}
	if typ, _ := srv.Do("TYPE", Key("u", "gcra")); typ != "string" {
		t.Errorf("GCRA key's type %v, want string", typ)
	}
}

// Without a store timeout, a run ends by its calls' own deadlines: a call
// sent in a run Redis does not answer (here: a proxy that holds every byte
// for a second) returns by the latest deadline of its batch, not when Redis
// answers.
func TestABatchRunEndsByItsCallsDeadlines(t *testing.T) {
	t.Parallel()
	_, proxy, client := proxiedStandalone(t)
	store := New(client, WithBatching(1), WithTimeout(0))
	l := sluice.PerSecond(5)
	apply := func(key string, d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return store.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 1}}, make([]sluice.Status, 1))
	}
	if err := apply("warm", time.Second); err != nil {
		t.Fatal(err)
	}
	proxy.SetLatency(time.Second)
	defer proxy.SetLatency(0)
	start := time.Now()
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	var wg sync.WaitGroup
	call := func(i int, d time.Duration) {
		wg.Go(func() {
			errs[i] = apply("call-"+strconv.Itoa(i), d)
			took[i] = time.Since(start)
		})
	}
	call(0, 100*time.Millisecond) // alone in its run, which ends at 100 ms and hands over
	waitRunning(t, store)
	call(1, 300*time.Millisecond)
	call(2, 300*time.Millisecond)
	waitQueued(t, store, 2)
	wg.Wait()
	for i, err := range errs {
		t.Logf("call %d: %v after %v", i, err, took[i].Round(time.Millisecond))
		if err == nil || took[i] > 900*time.Millisecond {
			t.Errorf("call %d in a run Redis does not answer: %v after %v, want an error by its deadline", i, err, took[i])
		}
	}
	for i := 1; i <= 2; i++ {
		if errs[i] != nil && strings.Contains(errs[i].Error(), "waiting for a batch") {
			t.Errorf("call %d never left the queue: the first run outlived its call's deadline", i)
		}
	}
}

// With a store timeout, a call still queued when less than a quarter of
// its timeout is left (here: behind a call too big to share its run, while
// Redis answers nothing: that run ends by its call's deadline, 5 ms before
// this one's) is failed as soon as the run ahead of it ends, without being
// sent: it consumes nothing and does not wait for a run of its own.
func TestACallQueuedPastTheStoreTimeoutFailsWhenTheRunAheadEnds(t *testing.T) {
	t.Parallel()
	srv, proxy, client := proxiedStandalone(t)
	// Long enough that both later calls queue before the run ahead ends,
	// however busy the machine (at 200 ms, CI's -race run once queued the
	// second a tenth of a second late, after the first had left the queue).
	const timeout = time.Second
	store := New(client, WithBatching(1), WithTimeout(timeout))
	l := sluice.PerSecond(5)
	checks := func(prefix string, n int) []sluice.Check {
		cs := make([]sluice.Check, n)
		for i := range cs {
			cs[i] = sluice.Check{Key: prefix + strconv.Itoa(i), Limit: l, Cost: 1}
		}
		return cs
	}
	if err := store.Apply(context.Background(), checks("warm", 1), make([]sluice.Status, 1)); err != nil {
		t.Fatal(err)
	}
	proxy.SetLatency(10 * time.Second)
	defer proxy.SetLatency(0)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	apply := func(i int, cs []sluice.Check) {
		wg.Go(func() {
			errs[i] = store.Apply(context.Background(), cs, make([]sluice.Status, len(cs)))
			took[i] = time.Since(start)
		})
	}
	apply(0, checks("first", 1)) // its run ends by the store timeout
	waitRunning(t, store)
	// The next call queues well within its timeout when that run ends: half
	// of it left then, where less than a quarter fails a queued call (a
	// loaded machine may end that run tens of milliseconds late).
	time.Sleep(timeout / 2)
	apply(1, checks("big", maxBatchChecks-10)) // the whole next run
	waitQueued(t, store, 1)
	apply(2, checks("late", 20)) // does not fit beside it
	waitQueued(t, store, 2)
	wg.Wait()
	for i, err := range errs {
		t.Logf("call %d: %v after %v", i, err, took[i].Round(time.Millisecond))
		if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("call %d: %v, want ErrStoreUnavailable", i, err)
		}
	}
	if err := errs[2]; !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a batch") {
		t.Errorf("late call: %v, want a deadline exceeded while waiting for a batch", err)
	}
	if took[2] > took[1]+timeout/2 {
		t.Errorf("late call returned after %v, the run ahead of it after %v: it waited for a run of its own", took[2], took[1])
	}
	proxy.SetLatency(0)
	if n, err := srv.Do("EXISTS", Key("late0", l.Name())); err != nil || n != int64(0) {
		t.Errorf("EXISTS of the late call's key: %v %v, want 0: it consumed", n, err)
	}
}

// Failed calls anywhere in a batch — first, last, one after another — each
// report their own error, and every other call of the batch is decided:
// the run resumes after each failure.
func TestFailedCallsAnywhereInABatchLeaveTheOthersDecided(t *testing.T) {
	t.Parallel()
	store, srv := pausedStore(t)
	l := sluice.SlidingLog(5, time.Second)
	keys := []string{"bad-1", "good-1", "bad-2", "bad-3", "good-2", "bad-4"}
	for _, k := range keys {
		if strings.HasPrefix(k, "bad") {
			srv.MustDo("HSET", Key(k, l.Name()), "g", "2", "h", "0", "n", "1", "a", "1", "0", "garbage")
		}
	}
	srv.MustDo("CONFIG", "RESETSTAT")
	srv.MustDo("CLIENT", "PAUSE", "300", "ALL")
	errs := make([]error, len(keys)+1)
	outs := make([][]sluice.Status, len(keys)+1)
	var wg sync.WaitGroup
	apply := func(i int, key string) {
		outs[i] = make([]sluice.Status, 1)
		wg.Go(func() {
			errs[i] = store.Apply(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: 1}}, outs[i])
		})
	}
	apply(0, "first") // sent, held by the pause
	waitRunning(t, store)
	for i, k := range keys { // queued in this order, sent as one batch
		apply(i+1, k)
		waitQueued(t, store, i+1)
	}
	wg.Wait()
	for i, k := range keys {
		err, st := errs[i+1], outs[i+1][0]
		if strings.HasPrefix(k, "bad") {
			if !errors.Is(err, sluice.ErrStoreUnavailable) {
				t.Errorf("%s: %v, want ErrStoreUnavailable", k, err)
			}
		} else if err != nil || !st.Allowed || st.Remaining != 4 {
			t.Errorf("%s: %v %+v, want allowed with 4 left", k, err, st)
		}
	}
	stats, err := srv.Info("commandstats")
	if err != nil {
		t.Fatal(err)
	}
	if n := scriptCalls(stats["cmdstat_evalsha"]); n != 2 {
		t.Errorf("%d calls took %d script runs, want 2", len(keys)+1, n)
	}
}

// proxiedStandalone starts a redis-server behind a fault proxy and returns
// the server, the proxy and a client (5 s timeout) that reaches Redis through it; both
// are closed when the test ends.
func proxiedStandalone(t *testing.T) (*redistest.Server, *faultproxy.Proxy, rueidis.Client) {
	t.Helper()
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	client, err := NewClient(Options{Addrs: []string{proxy.Addr()}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return srv, proxy, client
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}
