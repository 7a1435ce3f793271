package redis_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// testTimeout bounds each call of the tests that are not about timeouts:
// under the race detector, on a machine shared with other work, a call
// queued behind others can take seconds without anything being wrong.
const testTimeout = 10 * time.Second

// Redis is down when the store is opened: Open returns it all the same,
// decisions follow on_store_error (local, each limit halved for two
// instances), errors wrap sluice.ErrStoreUnavailable, and once redis-server
// starts on that address the decisions are Redis's, without a restart.
func TestOpenWhileRedisIsDownThenRedisComes(t *testing.T) {
	srv := redistest.Standalone(t)
	srv.Kill()
	var logs realtest.Buffer
	local := memory.New(memory.WithSweepInterval(0))
	defer local.Close()
	begin := time.Now()
	st, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Instances: 2, Local: local,
		Timeout: testTimeout, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("Open with Redis down: %v", err)
	}
	defer st.Close()
	t.Logf("Open returned in %v with Redis down", time.Since(begin).Round(time.Millisecond))
	if err := st.Ping(context.Background()); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Ping with Redis down: %v, want an error wrapping ErrStoreUnavailable", err)
	}
	if !strings.Contains(logs.String(), "redis store not reachable") {
		t.Errorf("Open logged %q, want a line saying Redis is not reachable", logs.String())
	}

	lim := sluice.NewLimiter(st)
	ctx := context.Background()
	limit := sluice.FixedWindow(10, time.Hour).Named("hourly")
	admitted := func(key string, calls int) int {
		t.Helper()
		n := 0
		for range calls {
			d, err := allow(lim, ctx, sluice.Check{Key: key, Limit: limit, Cost: 1})
			if err != nil {
				t.Fatalf("Allow(%s): %v, want a decision", key, err)
			}
			if d.Allowed {
				n++
			}
		}
		return n
	}
	if n := admitted("down", 10); n != 5 {
		t.Errorf("Redis down: %d of 10 admitted, want this instance's share, 5", n)
	}
	stats := st.Failover().Stats()
	if stats.FallbackDecisions != 10 || stats.StoreErrors == 0 || stats.Breaker != failover.BreakerOpen {
		t.Errorf("Redis down: %+v, want 10 fallback decisions, store errors, the breaker open", stats)
	}

	srv.Restart()
	came := time.Now()
	var moved time.Duration
	for {
		before := st.Failover().Stats().FallbackDecisions
		admitted("probe", 1)
		if st.Failover().Stats().FallbackDecisions == before {
			moved = time.Since(came)
			break
		}
		if time.Since(came) > 10*time.Second {
			t.Fatalf("decisions still by on_store_error 10 s after Redis started: %+v", st.Failover().Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("decisions from Redis %v after it started", moved.Round(time.Millisecond))

	fallbacks := st.Failover().Stats().FallbackDecisions
	if n := admitted("up", 12); n != 10 {
		t.Errorf("Redis up: %d of 12 admitted, want the whole limit, 10", n)
	}
	if got := st.Failover().Stats().FallbackDecisions; got != fallbacks {
		t.Errorf("Redis up: %d decisions by on_store_error, want none", got-fallbacks)
	}
	if keys, err := srv.Keys("sluice:{up}:*"); err != nil || len(keys) != 1 {
		t.Errorf("keys of the subject in Redis: %v, %v; want its state", keys, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Errorf("Ping with Redis up: %v", err)
	}
	for _, want := range []string{"circuit open", "redis store connected", "circuit closed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// Every way of failing to reach Redis wraps sluice.ErrStoreUnavailable;
// options that can never work do not, and Open refuses them.
func TestOpenErrors(t *testing.T) {
	srv := redistest.Standalone(t)
	down := redistest.Standalone(t)
	down.Kill()
	ctx := context.Background()

	if _, err := redis.NewClient(redis.Options{Addrs: []string{down.Addr}}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("NewClient with Redis down: %v, want an error wrapping ErrStoreUnavailable", err)
	}
	if _, err := redis.Dial(redis.Options{Addrs: []string{down.Addr}}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Dial with Redis down: %v, want an error wrapping ErrStoreUnavailable", err)
	}

	st, err := redis.Open(ctx, redis.Options{Addrs: []string{down.Addr}, OnStoreError: failover.Deny})
	if err != nil {
		t.Fatalf("Open with Redis down: %v", err)
	}
	d, err := allow(sluice.NewLimiter(st), ctx, sluice.Check{Key: "u", Limit: sluice.PerMinute(5), Cost: 1})
	if err != nil || d.Allowed {
		t.Errorf("deny with Redis down: %+v, %v; want a refusal", d, err)
	}
	if err := st.Ping(ctx); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Ping with Redis down: %v, want an error wrapping ErrStoreUnavailable", err)
	}
	st.Close()
	st.Close() // idempotent

	if st, err := redis.Open(ctx, redis.Options{Addrs: []string{down.Addr}, MustConnect: true}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		if err == nil {
			st.Close()
		}
		t.Errorf("Open with MustConnect and Redis down: %v, want an error wrapping ErrStoreUnavailable", err)
	}

	// A context that ends before the first attempt does: the store still
	// comes back, connecting in the background.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	st, err = redis.Open(cctx, redis.Options{Addrs: []string{down.Addr}})
	if err != nil {
		t.Fatalf("Open with an ended context: %v", err)
	}
	st.Close()

	for _, o := range []redis.Options{
		{Mode: "ring", Addrs: []string{srv.Addr}},
		{Mode: redis.ModeSentinel, Addrs: []string{srv.Addr}},
		{Mode: redis.ModeCluster, Addrs: []string{srv.Addr}},
		{Addrs: []string{srv.Addr}, OnStoreError: failover.Deny + 1},
	} {
		// Cluster mode learns that srv is no Cluster only from its answer:
		// a timeout of a second keeps a machine under load from reading
		// as an unreachable Redis (Open then returns the store).
		o.Timeout = time.Second
		if st, err := redis.Open(ctx, o); err == nil {
			st.Close()
			t.Errorf("Open(%+v) succeeded, want an error", o)
		} else if errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("Open(%+v): %v, which wraps ErrStoreUnavailable: the options are wrong, not Redis", o, err)
		}
	}
}

// A store opened without a Timeout gives Redis 50 ms per call, then
// decides by on_store_error.
func TestOpenDefaultTimeoutIs50ms(t *testing.T) {
	if redis.DefaultTimeout != 50*time.Millisecond {
		t.Fatalf("DefaultTimeout = %v, want 50ms", redis.DefaultTimeout)
	}
	srv := redistest.Standalone(t)
	ctx := context.Background()
	st, err := redis.Open(ctx, redis.Options{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lim := sluice.NewLimiter(st)
	// A quota the calls below cannot spend: the local fallback starts a key
	// at the primary's last word, which must still admit after them.
	check := sluice.Check{Key: "u", Limit: sluice.PerMinute(1_000_000), Cost: 1}
	// A loaded machine may keep even a running Redis's first answers (the
	// script's load among them) past 50 ms, and an open breaker sends calls
	// to the local fallback at once: call until one is Redis's.
	before := st.Failover().Stats()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := allow(lim, ctx, check); err != nil {
			t.Fatal(err)
		}
		s := st.Failover().Stats()
		if s.StoreErrors == before.StoreErrors && s.FallbackDecisions == before.FallbackDecisions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis up: %+v after 30 s, want a call decided by Redis", s)
		}
		before = s
	}

	srv.MustDo("CLIENT", "PAUSE", "1000", "ALL") // Redis answers nothing for a second
	begin := time.Now()
	d, err := allow(lim, ctx, check)
	took := time.Since(begin)
	if err != nil || !d.Allowed {
		t.Fatalf("Redis paused: %+v, %v; want the local fallback's admission", d, err)
	}
	if s := st.Failover().Stats(); s.StoreErrors != before.StoreErrors+1 || s.FallbackDecisions != before.FallbackDecisions+1 {
		t.Errorf("Redis paused: %+v, want one store error and one fallback decision more than %+v", s, before)
	}
	if took < 45*time.Millisecond || took > 500*time.Millisecond {
		t.Errorf("a call to a paused Redis took %v, want about 50ms", took)
	}
	t.Logf("a call to a paused Redis fell back after %v", took.Round(time.Millisecond))
}
