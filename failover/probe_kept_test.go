package failover_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// The primary may come to place a check on another node while the call of
// that check is under way: a Sentinel's store names every key's node ""
// until it connects, and connects while a call waits; a Cluster's slot
// moves. The call's failure opens the breaker of the node it was routed to,
// which keeps one of the call's checks to probe all the same, although
// Node no longer names that node for it: probes go where the primary
// places the check now, and close the breaker once the primary answers. An
// idle instance (no call comes to touch another node) thus reads closed,
// in Stats.Breaker (store_down, the breaker gauge, the dashboard), once
// the primary is back.
func TestABreakerOpenedByACallWhoseNodeMovedMidCallIsProbed(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer remote.Close()
	var name atomic.Pointer[string]
	empty, master := "", "10.0.0.7:6379"
	name.Store(&empty)
	primary := &storetest.Flaky{Next: remote}
	primary.Fail(storetest.ErrRedisDown)
	primary.During = func() { name.Store(&master) } // connected meanwhile
	f, err := failover.New(primary, nil, failover.Options{OnError: failover.Deny,
		Node:    func(*sluice.Check) string { return *name.Load() },
		Breaker: failover.BreakerOptions{Failures: 1, Clock: clk.Now}})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]sluice.Status, 1)
	if err := f.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: sluice.PerMinute(10), Cost: 1}}, out); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Breaker != failover.BreakerOpen {
		t.Fatalf("after the failed call: %+v; want the breaker of node \"\" open", st)
	}
	primary.During = nil
	primary.Fail(nil) // the primary answers; no call comes
	calls := primary.Calls.Load()
	for range 15 {
		clk.Advance(time.Second)
		f.Probe(context.Background())
	}
	if st := f.Stats(); st.Breaker != failover.BreakerClosed {
		t.Errorf("15 s after the primary came back, probed every second: %d probes sent, stats %+v; want the breaker probed and closed",
			primary.Calls.Load()-calls, st)
	}
}
