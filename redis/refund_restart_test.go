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

// A receipt from before Redis came back without its data is not refunded
// to the state there now, which never counted it: the refund took its
// units out of what the new state counted for other calls, and one more
// was admitted than the limit allows.
func TestARefundFromBeforeAnEmptyRestartTakesNothingBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout,
		OnStoreError: failover.Local, Breaker: failover.BreakerOptions{OpenFor: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const quota = 3
	c := sluice.Check{Key: "refund-restart", Limit: sluice.FixedWindow(quota, 400*24*time.Hour), Cost: 1}
	out := make([]sluice.Status, 1)
	if err := g.Apply(context.Background(), []sluice.Check{c}, out); err != nil || !out[0].Allowed || out[0].Charged == 0 {
		t.Fatalf("before the restart: %+v, %v; want admitted with a receipt", out[0], err)
	}
	receipt := out[0].Charged

	srv.Restart()
	for deadline := time.Now().Add(10 * time.Second); g.Losses().EmptyRestarts == 0 || g.Ping(context.Background()) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the restart not seen within 10 s: %+v", g.Losses())
		}
	}
	// Past the return period the restart begins (see Failover in the
	// package documentation), and the time a return call may take to
	// charge after it (the store's Timeout: 10 s here).
	for deadline := time.Now().Add(30 * time.Second); !g.Failover().Direct([]sluice.Check{c}); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still returning to Redis 30 s after the restart: %+v", g.Failover().Stats())
		}
		g.Apply(context.Background(), []sluice.Check{{Key: "other", Limit: c.Limit, Cost: 1}}, out)
	}

	admitted := spendN(t, g, c, 2*quota)
	if err := g.Refund(context.Background(), []sluice.Check{c}, []int64{receipt}); err != nil {
		t.Fatal(err)
	}
	admitted += spendN(t, g, c, quota)
	if admitted > quota {
		t.Errorf("admitted %d after the restart, for a limit of %d, a receipt from before it refunded meanwhile (failover %+v)",
			admitted, quota, g.Failover().Stats())
	}
}
