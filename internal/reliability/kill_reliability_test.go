package reliability_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/reliability"
	"github.com/sluice-dev/sluice/redis"
)

// clients is the size of the load in the fault tests.
const clients = 64

// redis-server is killed (SIGKILL) while 64 clients decide as fast as they
// can, and restarted empty, once per on_store_error policy: no panic, no
// error and no leaked goroutine; every decision is either Redis's or the
// policy's; the failover's counters and OnFallback equal the fallbacks the
// clients saw; and decisions come from Redis again within recoveryBound of
// its return (alone on the machine: the breaker's first probe, about 0.3 s).
func TestRedisKilledAndRestartedUnder64Clients(t *testing.T) {
	for _, tc := range []struct {
		policy    failover.OnError
		instances int
	}{{failover.Local, 2}, {failover.Allow, 1}, {failover.Deny, 1}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			srv := redistest.Standalone(t)
			leaks := leakCheck(t)
			s := newStack(t, redis.Options{Addrs: []string{srv.Addr}}, tc.policy, tc.instances)
			load := reliability.Start(s.lim, clients, perClient, classify(tc.policy, int64(tc.instances)))

			time.Sleep(300 * time.Millisecond)
			healthy := load.Phase(nil)
			load.Mark()
			srv.Kill()
			down, err := load.WaitFor(5*time.Second, "first fallback", func(p reliability.Phase) bool { return p.Fallback > 0 })
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond)
			extra := int64(0)
			if tc.policy == failover.Local {
				extra = checkShare(t, s.lim, tc.instances)
			}
			outage := load.Phase(nil)

			srv.Restart()
			load.Mark()
			back, err := load.WaitFor(2*recoveryBound, "first decision from Redis", func(p reliability.Phase) bool { return p.FirstPrimary >= 0 })
			if err != nil {
				t.Fatal(err)
			}
			// Every client is back once no fallback has been seen for 600 ms.
			settled := settle(t, load, 5*time.Second)
			seen := load.Stop()
			s.close()
			leaks()

			t.Logf("healthy: %d calls, %d fallbacks, p50 %v p99 %v", healthy.Calls, healthy.Fallback, healthy.P50, healthy.P99)
			t.Logf("killed: first fallback after %s; outage %d calls (%d fallbacks, %d from Redis in flight), p99 %v",
				ms(down.FirstFallback), outage.Calls, outage.Fallback, outage.Primary, outage.P99)
			t.Logf("restarted: first decision from Redis %s after its first PONG, last fallback %s after it",
				ms(back.FirstPrimary), ms(settled.LastFallback))
			checkCounters(t, s, seen, extra)
			if st := s.failover.Stats(); st.BreakerOpens == 0 {
				t.Errorf("breaker: %+v (want opened)", st)
			}
			if back.FirstPrimary > recoveryBound {
				t.Errorf("Redis decided again only %v after it was back, want ≤ %v", back.FirstPrimary, recoveryBound)
			}
			if n, _ := srv.Keys("sluice:*"); len(n) == 0 {
				t.Error("nothing written to Redis after its return")
			}
		})
	}
}

// checkShare runs 200 calls on a fresh key of a bucket of 100 refilled
// at 100 an hour during the outage: Local admits this instance's share,
// 100/instances, exactly. A bucket, not a window, whose end could fall
// between two of the calls: the share refills one unit in 36·instances
// seconds, far longer than the calls take. It returns the fallbacks it
// caused.
func checkShare(t *testing.T, lim *sluice.Limiter, instances int) int64 {
	t.Helper()
	share := sluice.TokenBucket(100, time.Hour).Named("share")
	admitted := 0
	for range 200 {
		d, err := allow(lim, context.Background(), sluice.Check{Key: "share-client", Limit: share, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
	}
	if admitted != 100/instances {
		t.Errorf("%d admitted on the local share during the outage, want %d", admitted, 100/instances)
	}
	return 200
}

// allow decides checks with lim into a Decision of its own.
func allow(lim *sluice.Limiter, ctx context.Context, checks ...sluice.Check) (sluice.Decision, error) {
	var d sluice.Decision
	err := lim.Allow(ctx, checks, &d)
	return d, err
}
