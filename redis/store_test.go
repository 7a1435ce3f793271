package redis_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

func TestKeysKeepOneSubjectInOneSlot(t *testing.T) {
	if got := redis.Key("user-42", "per-minute"); got != "sluice:{user-42}:per-minute" {
		t.Fatalf("Key = %q", got)
	}
}

func TestUnreachableRedisIsAnErrorNeverADecision(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	store := redis.New(srv.Client(t), redis.WithTimeout(300*time.Millisecond))
	checks := []sluice.Check{{Key: "u", Limit: sluice.PerSecond(5), Cost: 1}}
	out := make([]sluice.Status, 1)
	ctx := context.Background()
	if err := store.Apply(ctx, checks, out); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	out[0] = sluice.Status{}
	err := store.Apply(ctx, checks, out)
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("Apply with Redis down: %v, want an error wrapping sluice.ErrStoreUnavailable", err)
	}
	if !strings.HasPrefix(err.Error(), "redis store: ") {
		t.Errorf("error %q does not say where it comes from", err)
	}
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err = store.Apply(ctx, checks, out)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || !out[0].Allowed {
		t.Fatalf("after Redis came back: %+v, %v", out[0], err)
	}
}

func TestCancelledContextIsNotUnavailability(t *testing.T) {
	t.Parallel()
	store := redis.New(redistest.Standalone(t).Client(t), redis.WithTimeout(testTimeout))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := store.Apply(ctx, []sluice.Check{{Key: "u", Limit: sluice.PerSecond(5), Cost: 1}}, make([]sluice.Status, 1))
	if !errors.Is(err, context.Canceled) || errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("Apply on a cancelled context: %v, want context.Canceled and not ErrStoreUnavailable", err)
	}
}

func TestInvalidLimitIsAnError(t *testing.T) {
	t.Parallel()
	store := redis.New(redistest.Standalone(t).Client(t), redis.WithTimeout(testTimeout))
	out := make([]sluice.Status, 1)
	err := store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: sluice.Limit{}, Cost: 1}}, out)
	if !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Fatalf("zero Limit: %v, want ErrInvalidCheck", err)
	}
	// A GCRA debt of more than 2^52 µs is no valid limit (its waits could
	// not be kept exact in Lua).
	huge := sluice.GCRA(1, sluice.MaxWindow).WithBurst(200)
	err = store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: huge, Cost: 1}}, out)
	if !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Fatalf("GCRA with a 142-year debt: %v, want ErrInvalidCheck", err)
	}
}

// Without a test clock, time comes from Redis: a fixed window of an hour
// resets at the next whole hour of Redis's clock (here the same machine's).
func TestTimeComesFromRedis(t *testing.T) {
	t.Parallel()
	lim := sluice.NewLimiter(redis.New(redistest.Standalone(t).Client(t), redis.WithTimeout(testTimeout)))
	before := time.Now()
	d, err := allow(lim, context.Background(), sluice.Check{Key: "u", Limit: sluice.FixedWindow(2, time.Hour), Cost: 1})
	after := time.Now()
	if err != nil || !d.Allowed {
		t.Fatalf("%+v, %v", d, err)
	}
	end := before.Truncate(time.Hour).Add(time.Hour)
	if got := after.Add(d.ResetAfter); got.Before(end.Add(-time.Second)) || got.After(end.Add(time.Second)) {
		t.Errorf("resets at %v, want about %v", got, end)
	}
}

func TestDialConnectsInEachMode(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	cluster := redistest.Cluster(t)
	sentinel := redistest.Sentinel(t, srv, "primary")
	ctx := context.Background()
	checks := []sluice.Check{{Key: "u", Limit: sluice.PerMinute(3), Cost: 1}, {Key: "global", Limit: sluice.PerSecond(100), Cost: 1}}
	for _, o := range []redis.Options{
		{Addrs: []string{srv.Addr}, Timeout: testTimeout},
		{Mode: redis.ModeStandalone, Addrs: []string{srv.Addr}, Timeout: testTimeout},
		{Mode: redis.ModeCluster, Addrs: cluster.Addrs()[:1], Timeout: testTimeout},
		{Mode: redis.ModeSentinel, Addrs: []string{sentinel.Addr}, MasterSet: "primary", Timeout: testTimeout},
	} {
		store, err := redis.Dial(o)
		if err != nil {
			t.Fatalf("Dial(%+v): %v", o, err)
		}
		out := make([]sluice.Status, len(checks))
		if err := store.Apply(ctx, checks, out); err != nil || !out[0].Allowed || !out[1].Allowed {
			t.Errorf("Dial(%+v).Apply: %+v, %v", o, out, err)
		}
		store.Close()
	}
	for _, o := range []redis.Options{
		{Mode: redis.ModeCluster, Addrs: []string{srv.Addr}},
		{Mode: redis.ModeSentinel, Addrs: []string{srv.Addr}},
		{Mode: "ring", Addrs: []string{srv.Addr}},
		{Mode: redis.ModeCluster, Addrs: cluster.Addrs(), DB: 2},
	} {
		if store, err := redis.Dial(o); err == nil {
			store.Close()
			t.Errorf("Dial(%+v) succeeded, want an error", o)
		}
	}
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}
