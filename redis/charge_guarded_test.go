package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// What Open's local fallback admits while Redis cannot be asked is charged
// to Redis under an id (Store.ChargeOnce), so that a charge whose reply is
// lost, sent again, is taken once: once Redis decides the key again, the
// charge's id is in Redis beside the state it charged.
func TestGuardedChargesTheFallbackUnderAnID(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Instances: 1,
		OnStoreError: failover.Local, Timeout: 100 * time.Millisecond,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: 300 * time.Millisecond}}, redis.WithBatching(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	c := sluice.Check{Key: "charged-once", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}
	if n := spendN(t, g, c, 1); n != 1 {
		t.Fatalf("%d of 1 admitted before the outage", n)
	}
	srv.Pause()
	if n := spendN(t, g, c, 5); n != 5 {
		t.Fatalf("%d of 5 admitted by the fallback", n)
	}
	srv.Resume()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		spendN(t, g, c, 1)
		keys, err := srv.Keys("sluice:*:charge:*")
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			break
		}
		if time.Now().After(deadline) {
			all, _ := srv.Keys("*")
			t.Fatalf("5 s after Redis came back, no charge id in Redis (keys %q; failover %+v)", all, g.Failover().Stats())
		}
	}
}
