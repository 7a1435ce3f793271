package reliability_test

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, rueidisDeferredClose, rueidisDelayedRefresh) }

// rueidisDeferredClose is the goroutine by which a rueidis cluster client
// closes the connections of nodes that left the topology, 5 s after it
// noticed (cluster.go, _refresh): it ends by itself, after the client too.
var rueidisDeferredClose = goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2")

// rueidisDelayedRefresh is the goroutine by which a rueidis cluster client
// refreshes its topology a moment (up to about a second) after a node
// failed (singleflight.go, DelayDo): it sleeps, then refreshes or, with the
// client closed, does nothing, and ends. A loaded machine can still have it
// asleep when the test checks.
var rueidisDelayedRefresh = goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1")

// huge is a quota no test reaches: every call goes to the store (the
// over-limit cache never answers) and the remaining count tells who decided.
const huge = 1_000_000_000

var hourly = sluice.FixedWindow(huge, time.Hour).Named("hourly")

// storeTimeout is the store's timeout in these tests: five times the
// production default (50 ms, config store.redis.timeout). With every
// package of `make test` running at once, a healthy local Redis answered
// at p99 72–160 ms in CI runs, so at 50 ms the load alone opened the
// breaker and a test could not tell the faults it injects from the
// machine's; the injected faults go well beyond 250 ms.
const storeTimeout = 250 * time.Millisecond

// stack is a store like the server's Redis store, built by hand: an
// over-limit cache around Redis inside a failover with a local memory
// store, plus an OnFallback counter. It leaves out what redis.Open adds:
// no ChargeOnce (so no recovery charge and no return period), no Node (one
// breaker for every Cluster master), no watch (no Unreachable), and the
// failover's own timeout instead of the Redis store's (Timeout -1 with
// ChargeTimeout). TestRecoveryChargesWhatWasAdmittedLocally and
// internal/switchover open the store with redis.Open for those.
type stack struct {
	lim       *sluice.Limiter
	failover  *failover.Store
	fallbacks *reliability.Fallbacks
	close     func()
}

func newStack(t *testing.T, o redis.Options, policy failover.OnError, instances int) *stack {
	t.Helper()
	o.Timeout = storeTimeout
	// NewClient makes its first connection within the store's timeout, which
	// a loaded machine's HELLO may exceed: it is tried for up to 5 s.
	client, err := redis.NewClient(o)
	for start := time.Now(); err != nil && time.Since(start) < 5*time.Second; client, err = redis.NewClient(o) {
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	local := memory.New(memory.WithSweepInterval(0))
	s := &stack{fallbacks: &reliability.Fallbacks{}}
	cache := overlimit.New(redis.New(client, redis.WithTimeout(storeTimeout)), overlimit.Options{})
	s.failover, err = failover.New(cache, local, failover.Options{
		OnError: policy, Timeout: storeTimeout, Instances: instances, OnFallback: s.fallbacks.Hook})
	if err != nil {
		t.Fatal(err)
	}
	s.lim = sluice.NewLimiter(s.failover)
	closed := false
	s.close = func() {
		if !closed {
			closed = true
			client.Close()
			local.Close()
		}
	}
	t.Cleanup(s.close)
	return s
}

// classify tells the source of a decision on the hourly limit from its
// numbers: Redis has counted each client's calls from huge down, Local
// counts from this instance's share (huge/instances), Allow reports the
// limit untouched, Deny refuses for the breaker's open time. Redis
// never refuses (the quota is out of reach).
func classify(policy failover.OnError, instances int64) reliability.Classifier {
	return func(d *sluice.Decision) (reliability.Source, error) {
		switch policy {
		case failover.Local:
			switch {
			case !d.Allowed:
				return 0, fmt.Errorf("refused (%+v): neither Redis nor the local share is used up", d.Statuses)
			case d.Remaining >= huge/instances:
				return reliability.Primary, nil
			}
			return reliability.Fallback, nil
		case failover.Allow:
			switch {
			case !d.Allowed:
				return 0, fmt.Errorf("refused under policy allow: %+v", d.Statuses)
			case d.Remaining == huge:
				return reliability.Fallback, nil
			}
			return reliability.Primary, nil
		default:
			switch {
			case d.Allowed:
				return reliability.Primary, nil
			case d.RetryAfter == failover.DefaultBreakerOpenFor && d.Remaining == 0:
				return reliability.Fallback, nil
			}
			return 0, fmt.Errorf("refused, but not as policy deny refuses: %+v", d.Statuses)
		}
	}
}

// perClient gives client i its own key on the hourly limit.
func perClient(i int) []sluice.Check {
	return []sluice.Check{{Key: fmt.Sprintf("client-%d", i), Limit: hourly, Cost: 1}}
}

// checkCounters fails the test unless the failover's counters and its
// OnFallback hook agree with what the clients observed (totals plus extra
// fallbacks made outside the load).
func checkCounters(t *testing.T, s *stack, seen reliability.Totals, extraFallbacks int64) {
	t.Helper()
	st := s.failover.Stats()
	want := seen.Fallback + extraFallbacks
	t.Logf("clients saw %d calls: %d from Redis, %d fallbacks, %d errors; failover %+v; hook %d fallbacks, %d store errors",
		seen.Calls, seen.Primary, seen.Fallback, seen.Errors, st, s.fallbacks.Total(), s.fallbacks.StoreErrors())
	if seen.Errors != 0 || seen.Wrong != 0 {
		t.Errorf("%d errors and %d decisions that do not follow on_store_error reached the clients", seen.Errors, seen.Wrong)
	}
	if st.FallbackDecisions != want || s.fallbacks.Total() != want {
		t.Errorf("fallback decisions: Stats %d, OnFallback %d, observed %d", st.FallbackDecisions, s.fallbacks.Total(), want)
	}
	if st.StoreErrors != s.fallbacks.StoreErrors() {
		t.Errorf("store errors: Stats %d, OnFallback (not circuit-open) %d", st.StoreErrors, s.fallbacks.StoreErrors())
	}
}

// leakCheck returns a function that fails the test if goroutines started
// since the call are still running (the redis-server processes' waiters
// excepted: their fixture ends them at cleanup).
func leakCheck(t *testing.T) func() {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent(), rueidisDeferredClose, rueidisDelayedRefresh,
		goleak.IgnoreAnyFunction("github.com/sluice-dev/sluice/internal/redistest.(*Server).start.func1")}
	return func() {
		t.Helper()
		if err := goleak.Find(opts...); err != nil {
			t.Errorf("goroutines leaked: %v", err)
		}
	}
}

// recoveryBound is how soon after its return Redis must decide again. The
// breaker lets a probe through every 500 ms; alone on the machine the first
// one succeeds (0.27–0.39 s measured), but under make test other packages
// load the CPUs and a probe can miss the store's timeout, so the bound allows
// several.
const recoveryBound = 3 * time.Second

// settle waits up to timeout for 600 ms without a fallback (longer than the
// breaker's open time) and returns the phase. On a machine busy with other
// work a Redis call can still miss its timeout now and then and be
// decided by the policy; that is logged, not failed — such decisions are
// classified and counted like every other.
func settle(t *testing.T, load *reliability.Load, timeout time.Duration) reliability.Phase {
	t.Helper()
	p, err := load.WaitFor(timeout, "no more fallbacks", func(p reliability.Phase) bool {
		return time.Since(p.Start)-max(p.LastFallback, 0) > 600*time.Millisecond
	})
	if err != nil {
		t.Logf("fallbacks did not stop for 600 ms within %v (store timeouts on a busy machine); the last at %s", timeout, ms(p.LastFallback))
	}
	return p
}

// ms renders a duration in milliseconds for logs.
func ms(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func itoa(n int64) string { return fmt.Sprint(n) }
