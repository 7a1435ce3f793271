package failover_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// transitions records a breaker's state changes.
type transitions struct {
	mu  sync.Mutex
	log []string
}

func (r *transitions) record(from, to failover.BreakerState) {
	r.mu.Lock()
	r.log = append(r.log, from.String()+"→"+to.String())
	r.mu.Unlock()
}

func (r *transitions) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := ""
	for i, t := range r.log {
		if i > 0 {
			s += " "
		}
		s += t
	}
	return s
}

// failoverRig is a Store over a flaky primary backed by a memory store,
// with a memory store to fall back on, all on one manual clock.
type failoverRig struct {
	clk       *storetest.Clock
	primary   *storetest.Flaky
	remote    *memory.Store
	local     *memory.Store
	failover  *failover.Store
	limiter   *sluice.Limiter
	fallbacks []error
	changes   transitions
	mu        sync.Mutex
}

// rigT is what the rigs need of *testing.T and *rapid.T.
type rigT interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

func newFailoverRig(t rigT, opts failover.Options) *failoverRig {
	r := &failoverRig{clk: storetest.NewClock()}
	r.remote = memory.New(memory.WithClock(r.clk.Now), memory.WithSweepInterval(0))
	r.local = memory.New(memory.WithClock(r.clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { r.remote.Close(); r.local.Close() })
	r.primary = &storetest.Flaky{Next: r.remote}
	opts.Breaker.Clock = r.clk.Now
	opts.Breaker.OnStateChange = r.changes.record
	opts.OnFallback = func(err error) {
		r.mu.Lock()
		r.fallbacks = append(r.fallbacks, err)
		r.mu.Unlock()
	}
	r.failover = mustFailover(r.primary, r.local, opts)
	r.limiter = sluice.NewLimiter(r.failover)
	return r
}

func (r *failoverRig) allow(t rigT, checks ...sluice.Check) sluice.Decision {
	t.Helper()
	d, err := allow(r.limiter, context.Background(), checks...)
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	return d
}

func (r *failoverRig) fallbackCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.fallbacks)
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []failover.OnError{failover.Local, failover.Allow, failover.Deny} {
		got, err := failover.ParseOnError(p.String())
		if err != nil || got != p {
			t.Errorf("ParseOnError(%q) = %v, %v", p.String(), got, err)
		}
	}
	if _, err := failover.ParseOnError("retry"); err == nil {
		t.Error(`ParseOnError("retry") succeeded`)
	}
	if failover.OnError(0) != failover.Local {
		t.Error("the zero policy is not local")
	}
	if s := failover.OnError(9).String(); s != "on-store-error(9)" {
		t.Errorf("String of an invalid policy: %q", s)
	}
}

func TestFailoverPolicies(t *testing.T) {
	perSecond := sluice.PerSecond(10)
	perMinute := sluice.FixedWindow(5, time.Minute)
	checks := []sluice.Check{
		{Key: "k", Limit: perSecond, Cost: 1},
		{Key: "k", Limit: perMinute, Cost: 2},
		{Key: "k", Limit: sluice.TokenBucket(3, time.Second).Named("tiny"), Cost: 4}, // cost above burst
	}
	tests := []struct {
		name   string
		policy failover.OnError
		want   []sluice.Status
	}{
		{
			name: "allow admits every check as if untouched, except one that can never fit", policy: failover.Allow,
			want: []sluice.Status{
				{Allowed: true, Remaining: 10, Unavailable: true}, // no store decided: nothing counted
				{Allowed: true, Remaining: 5, Unavailable: true},
				{Remaining: 3, RetryAfter: sluice.Never},
			},
		},
		{
			name: "deny refuses every check until the breaker may ask again", policy: failover.Deny,
			want: []sluice.Status{
				{RetryAfter: 500 * time.Millisecond, ResetAfter: 500 * time.Millisecond, Unavailable: true},
				{RetryAfter: 500 * time.Millisecond, ResetAfter: 500 * time.Millisecond, Unavailable: true},
				{ResetAfter: 500 * time.Millisecond, RetryAfter: sluice.Never}, // no store could admit it
			},
		},
		{
			name: "local decides on the local store", policy: failover.Local,
			want: []sluice.Status{
				{Allowed: true, Remaining: 10}, // the batch is refused: peeks
				{Allowed: true, Remaining: 5},
				{Remaining: 3, RetryAfter: sluice.Never},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFailoverRig(t, failover.Options{OnError: tt.policy})
			r.primary.Fail(storetest.ErrRedisDown)
			d := r.allow(t, checks...)
			if d.Allowed {
				t.Error("a batch with a check above its burst was admitted")
			}
			for i, want := range tt.want {
				if d.Statuses[i] != want {
					t.Errorf("status %d = %+v, want %+v", i, d.Statuses[i], want)
				}
			}
			st := r.failover.Stats()
			if st.StoreErrors != 1 || st.FallbackDecisions != 1 || st.BreakerOpens != 0 || st.Breaker != failover.BreakerClosed {
				t.Errorf("stats %+v, want 1 store error, 1 fallback decision, closed", st)
			}
			if r.fallbackCount() != 1 || !errors.Is(r.fallbacks[0], storetest.ErrRedisDown) {
				t.Errorf("OnFallback got %v, want the primary's error once", r.fallbacks)
			}
			// Without the impossible check the batch is admitted in every
			// policy but deny.
			d = r.allow(t, checks[:2]...)
			if d.Allowed != (tt.policy != failover.Deny) {
				t.Errorf("two ordinary checks: allowed %v under %v", d.Allowed, tt.policy)
			}
		})
	}
}

func TestFailoverHealthyPrimaryDecidesAlone(t *testing.T) {
	r := newFailoverRig(t, failover.Options{})
	l := sluice.PerMinute(3)
	for i := range 4 {
		d := r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 1})
		if d.Allowed != (i < 3) {
			t.Errorf("request %d: allowed %v", i+1, d.Allowed)
		}
	}
	if st := r.failover.Stats(); st.StoreErrors != 0 || st.FallbackDecisions != 0 || st.BreakerOpens != 0 ||
		st.Breaker != failover.BreakerClosed || st.Uncharged != 0 || st.Nodes[""] != (failover.NodeStats{}) {
		t.Errorf("stats %+v, want all zero", st)
	}
	if r.local.Stats().Keys != 0 || r.fallbackCount() != 0 {
		t.Error("the local store or OnFallback was used while the primary was healthy")
	}
}

func TestFailoverCallerGivesUp(t *testing.T) {
	check := sluice.Check{Key: "k", Limit: sluice.PerSecond(5), Cost: 1}
	cancelled := func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, r *failoverRig)
		ctx     func() (context.Context, context.CancelFunc)
		want    error
	}{
		{
			name: "a context done before the call is an error and the primary is not asked",
			ctx:  cancelled,
			want: context.Canceled,
		},
		{
			name:    "a context cancelled while the primary is slow is an error, not a fallback",
			prepare: func(t *testing.T, r *failoverRig) { r.primary.Hang = true },
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(10*time.Millisecond, cancel)
				return ctx, cancel
			},
			want: context.Canceled,
		},
		{
			name:    "a caller's deadline shorter than the timeout is the caller's error",
			prepare: func(t *testing.T, r *failoverRig) { r.primary.Hang = true },
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 10*time.Millisecond)
			},
			want: context.DeadlineExceeded,
		},
		{
			name: "a context done while the breaker is open is an error, not a fallback",
			prepare: func(t *testing.T, r *failoverRig) {
				r.primary.Fail(storetest.ErrRedisDown)
				for range failover.DefaultBreakerFailures + 1 {
					r.allow(t, check)
				}
			},
			ctx:  cancelled,
			want: context.Canceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFailoverRig(t, failover.Options{OnError: failover.Allow, Timeout: time.Hour})
			if tt.prepare != nil {
				tt.prepare(t, r)
			}
			before, calls, fallbacks := r.failover.Stats(), r.primary.Calls.Load(), r.fallbackCount()
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err := allow(r.limiter, ctx, check)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want one wrapping %v", err, tt.want)
			}
			if after := r.failover.Stats(); !reflect.DeepEqual(after, before) || r.fallbackCount() != fallbacks {
				t.Errorf("stats %+v after, %+v before: the caller's giving up was counted", after, before)
			}
			if tt.prepare == nil && r.primary.Calls.Load() != calls {
				t.Error("the primary was asked for a caller that had already given up")
			}
		})
	}
}

func TestFailoverTimeoutIsAStoreError(t *testing.T) {
	r := newFailoverRig(t, failover.Options{OnError: failover.Deny, Timeout: 20 * time.Millisecond})
	r.primary.Hang = true
	start := time.Now()
	d := r.allow(t, sluice.Check{Key: "k", Limit: sluice.PerSecond(5), Cost: 1})
	if took := time.Since(start); took < 20*time.Millisecond || took > 5*time.Second {
		t.Errorf("the call took %v with a 20ms timeout", took)
	}
	if d.Allowed || d.RetryAfter != failover.DefaultBreakerOpenFor {
		t.Errorf("decision %+v, want refused by policy deny", d)
	}
	if st := r.failover.Stats(); st.StoreErrors != 1 || st.FallbackDecisions != 1 {
		t.Errorf("stats %+v, want one store error decided by the policy", st)
	}
	if r.fallbackCount() != 1 || !errors.Is(r.fallbacks[0], context.DeadlineExceeded) {
		t.Errorf("OnFallback got %v, want the timeout", r.fallbacks)
	}
}

func TestFailoverInvalidCheckIsTheCallersError(t *testing.T) {
	r := newFailoverRig(t, failover.Options{OnError: failover.Allow})
	r.primary.Fail(fmt.Errorf("redis store: %w: key too long", sluice.ErrInvalidCheck))
	for range 10 {
		_, err := allow(r.limiter, context.Background(), sluice.Check{Key: "k", Limit: sluice.PerSecond(5), Cost: 1})
		if !errors.Is(err, sluice.ErrInvalidCheck) {
			t.Fatalf("error %v, want ErrInvalidCheck", err)
		}
	}
	if st := r.failover.Stats(); st.StoreErrors != 0 || st.FallbackDecisions != 0 || st.Nodes[""] != (failover.NodeStats{}) {
		t.Errorf("stats %+v: invalid checks were counted against the store", st)
	}
}

func TestFailoverBreaker(t *testing.T) {
	check := sluice.Check{Key: "k", Limit: sluice.PerSecond(100), Cost: 1}
	r := newFailoverRig(t, failover.Options{OnError: failover.Allow})
	r.primary.Fail(storetest.ErrRedisDown)

	for range 5 {
		r.allow(t, check)
	}
	if got := r.failover.Stats(); got.Breaker != failover.BreakerOpen || got.BreakerOpens != 1 || got.StoreErrors != 5 {
		t.Fatalf("after 5 failures: %+v, want open once with 5 store errors", got)
	}
	for range 20 {
		r.allow(t, check)
	}
	if n := r.primary.Calls.Load(); n != 5 {
		t.Errorf("the primary was asked %d times, want 5: an open breaker asks nobody", n)
	}
	if !errors.Is(r.fallbacks[len(r.fallbacks)-1], failover.ErrCircuitOpen) {
		t.Errorf("fallback reason %v, want ErrCircuitOpen", r.fallbacks[len(r.fallbacks)-1])
	}

	t.Run("a failed probe opens it again", func(t *testing.T) {
		r.clk.Advance(failover.DefaultBreakerOpenFor)
		r.allow(t, check)
		if got := r.failover.Stats(); got.Breaker != failover.BreakerOpen || got.BreakerOpens != 2 || r.primary.Calls.Load() != 6 {
			t.Fatalf("after a failed probe: %+v, %d calls", got, r.primary.Calls.Load())
		}
	})
	t.Run("a successful probe closes it and the primary decides again", func(t *testing.T) {
		r.primary.Fail(nil)
		r.clk.Advance(failover.DefaultBreakerOpenFor)
		for range 10 {
			r.allow(t, check)
		}
		got := r.failover.Stats()
		if got.Breaker != failover.BreakerClosed || r.primary.Calls.Load() != 16 {
			t.Fatalf("after recovery: %+v, %d primary calls, want closed and 16", got, r.primary.Calls.Load())
		}
		if got.StoreErrors != 6 || got.FallbackDecisions != 26 || got.BreakerOpens != 2 {
			t.Errorf("stats %+v, want 6 store errors, 26 fallback decisions, 2 opens", got)
		}
	})
	if want := "closed→open open→half-open half-open→open open→half-open half-open→closed"; r.changes.String() != want {
		t.Errorf("transitions %q, want %q", r.changes.String(), want)
	}
}

// With the default settings a primary that is back decides again within
// 1 s, wherever in the breaker's cycle it comes back, even if the probe
// before took a whole 50 ms timeout to fail.
func TestPropertyFailoverRecoversWithinOneSecond(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := newFailoverRig(rt, failover.Options{})
		r.primary.Clock, r.primary.Cost = r.clk, failover.DefaultTimeout // every failure is a timeout
		r.primary.Fail(storetest.ErrRedisDown)
		check := sluice.Check{Key: "k", Limit: sluice.PerSecond(1000), Cost: 1}
		gap := time.Duration(rapid.Int64Range(int64(time.Millisecond), int64(20*time.Millisecond)).Draw(rt, "gap"))
		down := time.Duration(rapid.Int64Range(0, int64(5*time.Second)).Draw(rt, "down"))
		start := r.clk.Now()
		for r.clk.Now().Sub(start) < down {
			r.allow(rt, check)
			r.clk.Advance(gap)
		}
		r.primary.Fail(nil)
		r.primary.Cost = 0
		back := r.clk.Now()
		for {
			calls := r.primary.Calls.Load()
			r.allow(rt, check)
			if r.primary.Calls.Load() > calls && r.failover.Stats().Breaker == failover.BreakerClosed {
				break
			}
			if r.clk.Now().Sub(back) > time.Second {
				rt.Fatalf("the primary was back for %v and still not deciding (%+v)", r.clk.Now().Sub(back), r.failover.Stats())
			}
			r.clk.Advance(gap)
		}
	})
}

// Counters equal the events a test can see: failures the primary reported,
// decisions OnFallback heard of, and openings OnStateChange heard of.
func TestPropertyFailoverCountersMatchEvents(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		policy := rapid.SampledFrom([]failover.OnError{failover.Local, failover.Allow, failover.Deny}).Draw(rt, "policy")
		r := newFailoverRig(rt, failover.Options{OnError: policy, Instances: rapid.IntRange(1, 5).Draw(rt, "instances")})
		var primaryDecided, calls int64
		for range rapid.IntRange(1, 100).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0:
				r.primary.Fail(map[bool]error{true: storetest.ErrRedisDown, false: nil}[rapid.Bool().Draw(rt, "down")])
			case 1:
				r.clk.Advance(time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(rt, "advance")))
			default:
				asked, fails := r.primary.Calls.Load(), r.primary.Failures.Load()
				r.allow(rt, sluice.Check{Key: rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "key"), Limit: sluice.PerSecond(3), Cost: 1})
				calls++
				if r.primary.Calls.Load() > asked && r.primary.Failures.Load() == fails {
					primaryDecided++
				}
			}
		}
		st := r.failover.Stats()
		opens := int64(0)
		for _, tr := range r.changes.log {
			if tr == "closed→open" || tr == "half-open→open" {
				opens++
			}
		}
		switch {
		case st.StoreErrors != r.primary.Failures.Load():
			rt.Fatalf("StoreErrors %d, the primary failed %d times", st.StoreErrors, r.primary.Failures.Load())
		case st.FallbackDecisions != int64(r.fallbackCount()):
			rt.Fatalf("FallbackDecisions %d, OnFallback heard %d", st.FallbackDecisions, r.fallbackCount())
		case st.BreakerOpens != opens:
			rt.Fatalf("BreakerOpens %d, OnStateChange heard %d openings", st.BreakerOpens, opens)
		case primaryDecided+st.FallbackDecisions != calls:
			rt.Fatalf("%d decided by the primary + %d by the policy != %d calls", primaryDecided, st.FallbackDecisions, calls)
		}
	})
}

func TestFailoverLocalDividesByInstances(t *testing.T) {
	tests := []struct {
		name      string
		limit     sluice.Limit
		instances int
		burst     int // admitted at one instant by one instance
	}{
		{"a per-second GCRA over three instances admits a third", sluice.PerSecond(10), 3, 3},
		{"a fixed window over three instances admits a third", sluice.FixedWindow(10, time.Minute), 3, 3},
		{"a sliding log admits at least one", sluice.SlidingLog(2, time.Second), 3, 1},
		{"a token bucket's explicit burst is divided", sluice.TokenBucket(10, time.Second).WithBurst(20), 4, 5},
		{"one instance keeps the whole limit", sluice.PerSecond(10), 1, 10},
		{"zero instances mean one", sluice.PerSecond(10), 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFailoverRig(t, failover.Options{Instances: tt.instances})
			r.primary.Fail(storetest.ErrRedisDown)
			check := sluice.Check{Key: "k", Limit: tt.limit, Cost: 1}
			admitted := 0
			for range 30 {
				d := r.allow(t, check)
				if d.Allowed {
					admitted++
				}
				if d.Limit != tt.limit {
					t.Fatalf("decision names %v, want the caller's %v", d.Limit, tt.limit)
				}
				if st := d.Statuses[0]; st.Remaining > tt.limit.Burst() {
					t.Fatalf("remaining %d above the limit's burst", st.Remaining)
				}
			}
			if admitted != tt.burst {
				t.Errorf("admitted %d at once, want %d", admitted, tt.burst)
			}
		})
	}
}

func TestFailoverLocalKeepsTheRateExact(t *testing.T) {
	// 10/s over 3 instances: each refills one unit every 300 ms.
	r := newFailoverRig(t, failover.Options{OnError: failover.Local, Instances: 3})
	r.primary.Fail(storetest.ErrRedisDown)
	check := sluice.Check{Key: "k", Limit: sluice.PerSecond(10), Cost: 1}
	for range 3 {
		r.allow(t, check)
	}
	d := r.allow(t, check)
	if d.Allowed || d.RetryAfter != 300*time.Millisecond {
		t.Fatalf("4th at once: %+v, want refused for 300ms", d)
	}
	r.clk.Advance(299 * time.Millisecond)
	if r.allow(t, check).Allowed {
		t.Fatal("admitted after 299ms")
	}
	r.clk.Advance(time.Millisecond)
	if !r.allow(t, check).Allowed {
		t.Fatal("refused after 300ms")
	}
}

func TestFailoverLocalShareTooSmallIsNotNever(t *testing.T) {
	// Cost 5 fits the shared burst of 10 but never one instance's 3: it
	// fits again once the primary is back, not never.
	r := newFailoverRig(t, failover.Options{Instances: 3})
	r.primary.Fail(storetest.ErrRedisDown)
	d := r.allow(t, sluice.Check{Key: "k", Limit: sluice.PerSecond(10), Cost: 5})
	if d.Allowed || d.RetryAfter != failover.DefaultBreakerOpenFor {
		t.Errorf("decision %+v, want refused with RetryAfter %v", d, failover.DefaultBreakerOpenFor)
	}
	d = r.allow(t, sluice.Check{Key: "k", Limit: sluice.PerSecond(10), Cost: 11})
	if d.Allowed || d.RetryAfter != sluice.Never {
		t.Errorf("cost above the shared burst: %+v, want RetryAfter Never", d)
	}
}

func TestFailoverLocalErrorIsStoreUnavailable(t *testing.T) {
	r := newFailoverRig(t, failover.Options{})
	r.primary.Fail(errors.New("redis: WRONGTYPE"))
	broken := &storetest.Flaky{}
	broken.Fail(errors.New("local store broken"))
	f := mustFailover(r.primary, broken, failover.Options{})
	err := f.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: sluice.PerSecond(1), Cost: 1}}, make([]sluice.Status, 1))
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("error %v, want one wrapping ErrStoreUnavailable", err)
	}
	if st := f.Stats(); st.StoreErrors != 1 || st.FallbackDecisions != 0 {
		t.Errorf("stats %+v, want a store error and no decision", st)
	}
}

func TestNewRefusesMisuse(t *testing.T) {
	mem := memory.New()
	defer mem.Close()
	for name, f := range map[string]func() error{
		"nil primary":           func() error { _, err := failover.New(nil, mem, failover.Options{}); return err },
		"local without a store": func() error { _, err := failover.New(mem, nil, failover.Options{}); return err },
		"an undeclared policy":  func() error { _, err := failover.New(mem, mem, failover.Options{OnError: 9}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if f() == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := failover.New(mem, nil, failover.Options{OnError: failover.Allow}); err != nil {
		t.Error(err) // allowed
	}
	cache := overlimit.New(nil, overlimit.Options{})
	if err := cache.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: sluice.PerSecond(1), Cost: 1}}, make([]sluice.Status, 1)); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("a cache without a store: %v", err)
	}
}

// mustFailover is New for arguments known to be valid.
func mustFailover(primary, local sluice.Store, opts failover.Options) *failover.Store {
	f, err := failover.New(primary, local, opts)
	if err != nil {
		panic(err)
	}
	return f
}

// Calls an overlimit.Cache answers itself say nothing about the store behind
// it: a flood of them between failures must not keep the breaker closed.
func TestFailoverCacheHitsDoNotHideAnOutage(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now))
	defer remote.Close()
	primary := &storetest.Flaky{Next: remote}
	cache := overlimit.New(primary, overlimit.Options{Clock: clk.Now})
	// Calls bounded by a minute: the cache's hits must not time out on a
	// loaded machine (past the default 50 ms), the failures are Fail's.
	f := mustFailover(cache, nil, failover.Options{OnError: failover.Allow, Timeout: time.Minute, Breaker: failover.BreakerOptions{Clock: clk.Now}})
	lim := sluice.NewLimiter(f)
	abuser := sluice.Check{Key: "abuser", Limit: sluice.PerHour(1), Cost: 1}
	for range 2 { // admitted, then refused: remembered for an hour
		if _, err := allow(lim, context.Background(), abuser); err != nil {
			t.Fatal(err)
		}
	}
	// Timeouts: the cache keeps what it knows (a refused connection would
	// make it forget everything, since Redis may have restarted).
	primary.Fail(fmt.Errorf("%w: read: %w", sluice.ErrStoreUnavailable, context.DeadlineExceeded))
	for i := range failover.DefaultBreakerFailures {
		for range 100 {
			d, err := allow(lim, context.Background(), abuser)
			if err != nil || d.Allowed {
				t.Fatalf("the abuser's flood: %+v, %v", d, err)
			}
		}
		if st := f.Stats(); st.Breaker != failover.BreakerClosed {
			t.Fatalf("open after %d failures", i)
		}
		allow(lim, context.Background(), sluice.Check{Key: "someone", Limit: sluice.PerHour(1), Cost: 1})
	}
	if st := f.Stats(); st.Breaker != failover.BreakerOpen || st.StoreErrors != failover.DefaultBreakerFailures {
		t.Errorf("stats %+v: the breaker did not open after %d failures between cache hits", st, failover.DefaultBreakerFailures)
	}
	if saved := cache.Stats().RoundTripsSaved; saved != 100*failover.DefaultBreakerFailures {
		t.Errorf("round trips saved %d, want %d", saved, 100*failover.DefaultBreakerFailures)
	}
}

func TestFailoverConcurrent(t *testing.T) {
	r := newFailoverRig(t, failover.Options{Instances: 2, Timeout: time.Second})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if i%50 == 0 {
					r.primary.Fail(map[bool]error{true: storetest.ErrRedisDown, false: nil}[(g+i/50)%2 == 0])
				}
				if i%10 == 0 {
					r.clk.Advance(100 * time.Millisecond)
				}
				_, err := allow(r.limiter, context.Background(), sluice.Check{Key: fmt.Sprint("k", i%5), Limit: sluice.PerSecond(50), Cost: 1}, sluice.Check{Key: "global", Limit: sluice.PerSecond(1000), Cost: 1})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st := r.failover.Stats(); st.StoreErrors != r.primary.Failures.Load() || st.FallbackDecisions != int64(r.fallbackCount()) {
		t.Errorf("stats %+v vs %d failures and %d fallbacks", st, r.primary.Failures.Load(), r.fallbackCount())
	}
}

// A Store in front of a remote store (here a memory store standing in for
// Redis), with an overlimit.Cache around the remote store so that a client
// that keeps knocking is refused without a round trip.
func ExampleNew() {
	remote := memory.New() // in production: a redis.Store
	defer remote.Close()
	local := memory.New()
	defer local.Close()

	cache := overlimit.New(remote, overlimit.Options{})
	store, err := failover.New(cache, local, failover.Options{
		OnError:   failover.Local, // the default: decide locally on quota ÷ instances
		Instances: 4,
		Timeout:   time.Second, // a call to the remote store that takes longer failed (default 50 ms)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	limiter := sluice.NewLimiter(store)

	check := sluice.Check{Key: "client-7", Limit: sluice.PerMinute(2), Cost: 1}
	for range 5 {
		d, err := allow(limiter, context.Background(), check)
		if err != nil {
			fmt.Println("error:", err) // never a decision
			continue
		}
		fmt.Println(d.Allowed, d.Violated)
	}
	fmt.Println("round trips saved:", cache.Stats().RoundTripsSaved)
	fmt.Println("fallback decisions:", store.Stats().FallbackDecisions)
	// Output:
	// true []
	// true []
	// false [per-minute]
	// false [per-minute]
	// false [per-minute]
	// round trips saved: 2
	// fallback decisions: 0
}

// The cost a Store adds to a healthy primary (a memory store here).
func BenchmarkFailoverHealthy(b *testing.B) {
	remote, local := memory.New(), memory.New()
	defer remote.Close()
	defer local.Close()
	f := mustFailover(remote, local, failover.Options{})
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerSecond(1 << 30), Cost: 1}}
	out := make([]sluice.Status, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Apply(context.Background(), checks, out); err != nil {
			b.Fatal(err)
		}
	}
}

// A call decided locally while the breaker is open, limits divided by 4.
func BenchmarkFailoverLocalFallback(b *testing.B) {
	local := memory.New()
	defer local.Close()
	down := &storetest.Flaky{}
	down.Fail(storetest.ErrRedisDown)
	f := mustFailover(down, local, failover.Options{Instances: 4})
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerSecond(1 << 30), Cost: 1}, {Key: "k", Limit: sluice.PerDay(1 << 20), Cost: 1}}
	out := make([]sluice.Status, 2)
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Apply(context.Background(), checks, out); err != nil {
			b.Fatal(err)
		}
	}
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}
