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

// An instance started while its Sentinel is down decides its first calls
// on the node "" (Store.Node before a connection): they fail and open that
// node's breaker. Once the Sentinel is back the store connects and names
// the master's address as the node of every key; with no call coming (an
// idle instance, or one whose degradation level sheds every request
// because of store_down), the probes of node "" go to the master, and its
// breaker, the only one the Store knows, closes: Stats.Breaker (the
// server's store_down) follows Redis back within about OpenFor.
func TestAnIdleInstanceStartedWhileItsSentinelIsDownFollowsRedisBack(t *testing.T) {
	master := redistest.Standalone(t)
	sentinel := redistest.Sentinel(t, master, "probe")
	sentinel.Kill()

	g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeSentinel, Addrs: []string{sentinel.Addr},
		MasterSet: "probe", Timeout: 200 * time.Millisecond, OnStoreError: failover.Local,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Failover().RunProbes(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	out := make([]sluice.Status, 1)
	if err := g.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: sluice.PerMinute(10), Cost: 1}}, out); err != nil {
		t.Fatal(err)
	}
	if b := g.Failover().Stats().Breaker; b != failover.BreakerOpen {
		t.Fatalf("breaker %v after a call while the Sentinel is down, want open", b)
	}
	sentinel.Restart()
	deadline := time.Now().Add(3 * time.Second)
	for g.Ping(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the store did not connect within 3s of the Sentinel's return")
		}
		time.Sleep(20 * time.Millisecond)
	}
	back := time.Now()
	for g.Failover().Stats().Breaker != failover.BreakerClosed {
		if time.Since(back) > 3*time.Second {
			t.Fatalf("Stats: %+v 3s after Redis answered again, with RunProbes running (OpenFor 20ms): breaker still open", g.Failover().Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
