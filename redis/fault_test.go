package redis_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// Redis is killed while 16 goroutines decide, and restarted: no panic, no
// error reaches the caller, decisions follow on_store_error (local, with the
// quota halved for two instances), the counters equal the fallbacks
// observed, and decisions come from Redis again soon after its return:
// the breaker lets a probe through at most its OpenFor (500 ms) after it
// last saw Redis fail, so about half a second and a round trip; the bound
// is 2 s, room for -race on a machine running every package's tests (1.16 s
// seen at a load of 15), where a breaker that stopped probing never
// recovers (the loop below gives up at 3 s).
func TestRedisKilledAndRestarted(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	local := memory.New(memory.WithSweepInterval(0))
	defer local.Close()
	var fallbacks atomic.Int64
	primary := redis.New(client, redis.WithTimeout(50*time.Millisecond))
	cache := overlimit.New(primary, overlimit.Options{})
	fo, err := failover.New(cache, local, failover.Options{
		OnError: failover.Local, Instances: 2,
		OnFallback: func(error) { fallbacks.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.NewLimiter(fo)
	// Large enough that the hammering never hits it: every call goes to the
	// store (a refused client would be answered by the over-limit cache).
	limit := sluice.FixedWindow(1_000_000_000, time.Hour).Named("hourly")
	share := sluice.FixedWindow(100, time.Hour).Named("share")
	ctx := context.Background()

	var errs atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
			var d sluice.Decision
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := lim.Allow(ctx, checks, &d); err != nil {
					errs.Add(1)
					continue
				}
				if g%4 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	srv.Kill()
	time.Sleep(200 * time.Millisecond)
	// During the outage a fresh key gets this instance's share: 100/2.
	admitted := 0
	for range 200 {
		d, err := allow(lim, ctx, sluice.Check{Key: "share-client", Limit: share, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	if admitted != 50 {
		t.Errorf("%d admitted during the outage, the local share is 50", admitted)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if errs.Load() != 0 {
		t.Errorf("%d calls returned an error instead of a fallback decision", errs.Load())
	}
	st := fo.Stats()
	if st.FallbackDecisions == 0 || st.FallbackDecisions != fallbacks.Load() {
		t.Errorf("fallback decisions: counter %d, observed %d", st.FallbackDecisions, fallbacks.Load())
	}
	if st.BreakerOpens == 0 {
		t.Error("the breaker never opened")
	}

	// Redis returns (empty: no persistence). Time from its first PONG until
	// a decision comes from Redis again.
	srv.Restart()
	back := time.Now()
	for {
		before := fallbacks.Load()
		d, err := allow(lim, ctx, sluice.Check{Key: "probe", Limit: limit, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if fallbacks.Load() == before && d.Allowed {
			break
		}
		if time.Since(back) > 3*time.Second {
			t.Fatal("decisions did not come from Redis again within 3 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	recovery := time.Since(back)
	t.Logf("recovered %v after Redis answered; stats %+v", recovery, fo.Stats())
	if recovery > 2*time.Second {
		t.Errorf("recovery took %v, want ≤ 2s", recovery)
	}
	if keys, err := srv.Keys("sluice:*"); err != nil || len(keys) == 0 {
		t.Errorf("the decision after recovery wrote nothing to Redis: %v %v", keys, err)
	}
}

// The other policies: allow admits everything, deny refuses everything, and
// neither is an error.
func TestStoreErrorPolicies(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	srv.Kill()
	for _, tc := range []struct {
		policy failover.OnError
		allow  bool
	}{{failover.Allow, true}, {failover.Deny, false}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			fo, err := failover.New(redis.New(client, redis.WithTimeout(20*time.Millisecond)), nil,
				failover.Options{OnError: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			d, err := allow(sluice.NewLimiter(fo), context.Background(), sluice.Check{Key: "k", Limit: sluice.PerSecond(1), Cost: 1})
			if err != nil || d.Allowed != tc.allow {
				t.Fatalf("allowed=%v err=%v, want allowed=%v", d.Allowed, err, tc.allow)
			}
			if errors.Is(err, sluice.ErrStoreUnavailable) || fo.Stats().StoreErrors != 1 {
				t.Errorf("stats %+v", fo.Stats())
			}
		})
	}
}
