package failover_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// A primary of two nodes (a Cluster: keys "a…" on node a, "b…" on node b)
// whose node a goes down, and then no call comes (an idle instance, or one
// whose degradation level, entered by store_down, sheds every request). A
// node is left out of Stats 10 s after it was last routed to, but a probe
// routes to its node: a, probed and still down, stays in Stats, and
// Stats.Breaker (a server's store_down) reads open for as long as it is
// down, while b, neither called nor probed, ages out.
func TestAProbedNodeStillDownStaysInStats(t *testing.T) {
	r := newFailoverRig(t, failover.Options{OnError: failover.Allow,
		Node:    func(c *sluice.Check) string { return c.Key[:1] },
		Breaker: failover.BreakerOptions{Failures: 1}})
	r.allow(t, sluice.Check{Key: "b1", Limit: sluice.PerMinute(10), Cost: 1})
	r.primary.Fail(storetest.ErrRedisDown)
	r.allow(t, sluice.Check{Key: "a1", Limit: sluice.PerMinute(10), Cost: 1})
	calls := r.primary.Calls.Load()

	const probes = 30 // 15 s at the default OpenFor
	for range probes {
		r.clk.Advance(failover.DefaultBreakerOpenFor)
		r.failover.Probe(context.Background())
	}
	st := r.failover.Stats()
	if got := r.primary.Calls.Load() - calls; got != probes {
		t.Errorf("%d probes reached the primary, want %d", got, probes)
	}
	if a, in := st.Nodes["a"]; !in || a.Breaker != failover.BreakerOpen || st.Breaker != failover.BreakerOpen {
		t.Errorf("15 s into node a's outage, its probes failing: Stats.Breaker %v, nodes %v; want a in them, open", st.Breaker, st.Nodes)
	}
	if _, in := st.Nodes["b"]; in {
		t.Errorf("node b, not called for 15 s, still in Stats: %v", st.Nodes)
	}
}

// A Store's primary may come to place a failed call's check on another
// node than the one it failed on: a Sentinel's or Cluster's store names
// every key's node "" until it connects, a Cluster slot moves, a Sentinel
// names a new master. Calls on the old node open its breaker; then no
// call comes. Its probes go where the primary places the check now, and
// settle the old node's breaker: open while the primary cannot answer,
// closed once it can, so that Stats.Breaker (a server's store_down)
// follows the primary with no call.
func TestAProbeOfANodeWhoseCheckMovedSettlesItsBreaker(t *testing.T) {
	var connected atomic.Bool
	r := newFailoverRig(t, failover.Options{OnError: failover.Allow,
		Node: func(*sluice.Check) string {
			if connected.Load() {
				return "10.0.0.1:6379"
			}
			return ""
		},
		Breaker: failover.BreakerOptions{Failures: 1}})
	r.primary.Fail(storetest.ErrRedisDown)
	r.allow(t, sluice.Check{Key: "u", Limit: sluice.PerMinute(10), Cost: 1})
	if st := r.failover.Stats(); st.Nodes[""].Breaker != failover.BreakerOpen {
		t.Fatalf("after a failed call on node \"\": %v, want its breaker open", st.Nodes)
	}
	connected.Store(true) // the check is now placed on the master
	calls := r.primary.Calls.Load()

	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.failover.Probe(context.Background())
	if got, st := r.primary.Calls.Load()-calls, r.failover.Stats(); got != 1 || st.Breaker != failover.BreakerOpen {
		t.Errorf("a probe of node \"\" while the primary is down: %d calls, breaker %v (nodes %v); want 1, open", got, st.Breaker, st.Nodes)
	}
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.failover.Probe(context.Background())
	if got, st := r.primary.Calls.Load()-calls, r.failover.Stats(); got != 2 || st.Breaker != failover.BreakerClosed {
		t.Errorf("a probe of node \"\" once the primary is back: %d calls, breaker %v (nodes %v); want 2, closed", got, st.Breaker, st.Nodes)
	}
}
