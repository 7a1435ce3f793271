package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A call spanning two Cluster masters, one of them down, counts against
// the failed master's breaker only: the healthy one keeps its keys on
// Redis (the failure names its node, failover's FailedNode).
func TestACrossSlotFailureBlamesOnlyTheFailedMaster(t *testing.T) {
	cl := redistest.Cluster(t)
	st, err := Open(context.Background(), Options{Mode: ModeCluster, Addrs: cl.Addrs(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	limit := sluice.FixedWindow(1000, time.Hour).Named("hourly")
	global := limit.Named("global")
	down := cl.MasterOf(int(slot(Key("global", global.ID()))))
	subject := ""
	for i := 0; subject == ""; i++ {
		if k := fmt.Sprintf("client-%d", i); cl.MasterOf(int(slot(Key(k, limit.ID())))) != down {
			subject = k
		}
	}
	lim := sluice.NewLimiter(st)
	call := func() error {
		var d sluice.Decision
		return lim.Allow(context.Background(), []sluice.Check{
			{Key: subject, Limit: limit, Cost: 1}, {Key: "global", Limit: global, Cost: 1}}, &d)
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	// The store names a key's master once its watch has read the slot map.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mine, theirs := st.redis.node(&sluice.Check{Key: subject, Limit: limit}), st.redis.node(&sluice.Check{Key: "global", Limit: global})
		if mine != "" && theirs == down.Addr {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Open the store names the masters %q and %q, want the paused one %s for global", mine, theirs, down.Addr)
		}
	}
	down.Pause()
	defer down.Resume()
	for range 8 {
		if err := call(); err != nil && !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Fatal(err)
		}
	}
	nodes := st.Failover().Stats().Nodes
	for name, n := range nodes {
		if failing := n.StoreErrors > 0; failing != (name == down.Addr) {
			t.Errorf("node %q (the paused master is %s): %d failures, %v", name, down.Addr, n.StoreErrors, n.Breaker)
		}
	}
}
