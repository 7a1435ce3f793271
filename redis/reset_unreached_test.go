package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/faultproxy"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// admitUntilRefused applies c to s until one is refused, at most max
// times, and returns how many were admitted.
func admitUntilRefused(t *testing.T, s sluice.Store, c sluice.Check, max int) int {
	t.Helper()
	n := 0
	for range max {
		if !applyOne(t, s, c).Allowed {
			break
		}
		n++
	}
	return n
}

// A Reset that Redis does not take (unreachable: the admin API answers 503,
// nothing done) changes nothing the fallback knows: its state of the key
// stays as it was, and what it admitted stays owed to Redis. A failed
// reset hands out no fresh quota, and a retry of it none either.
//
// One instance, 10 an hour, Redis unreachable from the start: the fallback
// admits 10, the Reset fails, and the fallback admits nothing more (it
// admitted 10 more, of which Redis was charged only those 10: 20 in one
// window of a limit of 10). Once Redis is back, it is charged the 10.
func TestAResetRedisDidNotTakeLeavesTheFallbackAsItWas(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy, err := faultproxy.New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	clock := nowClock()
	g, err := redis.Open(context.Background(), redis.Options{
		Addrs: []string{proxy.Addr()}, Timeout: testTimeout, Instances: 1,
		Breaker: failover.BreakerOptions{Clock: clock.Now},
	}, redis.WithBatching(0))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	other := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	limit := sluice.FixedWindow(10, time.Hour)
	c := sluice.Check{Key: "reset-unreached", Limit: limit, Cost: 1}

	proxy.RefuseNew(true)
	proxy.ResetAll()
	if n := admitUntilRefused(t, g, c, 30); n != 10 {
		t.Fatalf("the fallback admitted %d before the reset, want 10", n)
	}
	for range 2 { // the 503 invites a retry
		if _, err := g.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err == nil {
			t.Fatal("Reset succeeded with Redis unreachable")
		}
		if n := admitUntilRefused(t, g, c, 30); n != 0 {
			t.Errorf("after a Reset that failed, the fallback admitted %d more", n)
		}
	}

	proxy.RefuseNew(false)
	clock.Advance(2 * time.Second) // past the breaker's open period
	applyOne(t, g, c)
	p := c
	p.Cost = 0
	if left := applyOne(t, other, p).Remaining; left != 0 {
		t.Errorf("after the outage Redis has %d left of 10: the fallback's 10 not all charged", left)
	}
}
