package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// Options.Node: "a circuit breaker per node, so that the keys of healthy
// nodes stay on the primary while another node is down". A call spanning
// the down node b and the healthy node a is decided locally, as it must
// be, and what it admitted on a is charged to a at once: the keys of a
// stay the primary's alone for the whole outage: a client on a only,
// limit 10 an hour, two instances, all its calls on this instance, gets
// its 10, none of them a fallback of a, and Direct says the primary alone
// may decide it, as it does of the key the spanning calls admitted.
func TestAHealthyNodeKeepsTheKeysOfLimitsNoFallbackAdmittedOnThePrimary(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer remote.Close()
	primary, f := onNodes(t, clk, remote, failover.Options{
		Charge: func(context.Context, []sluice.Check) error { return nil }})
	lim := sluice.NewLimiter(f)
	ctx := context.Background()

	// A route limited per client and globally: the global key lives on b.
	per := sluice.FixedWindow(1000, time.Hour).Named("per")
	global := sluice.FixedWindow(1000, time.Hour).Named("global")
	route := []sluice.Check{{Key: "a-route-client", Limit: per, Cost: 1}, {Key: "b-global", Limit: global, Cost: 1}}
	if _, err := allow(lim, ctx, route...); err != nil {
		t.Fatal(err)
	}
	primary.down.Store("b")
	for range 3 {
		if d, err := allow(lim, ctx, route...); err != nil || !d.Allowed {
			t.Fatalf("the spanning call while b is down: %+v, %v", d, err)
		}
		clk.Advance(10 * time.Millisecond)
	}

	// Another client, on a only, on a limit of 10 an hour.
	own := sluice.Check{Key: "a-client", Limit: sluice.FixedWindow(10, time.Hour).Named("hourly"), Cost: 1}
	if !f.Direct([]sluice.Check{own}) {
		t.Error("Direct of a key of a whose limit never fell back: false, want true")
	}
	if !f.Direct(route[:1]) {
		t.Error("Direct of the key of a the spanning calls admitted locally, charged to a at once: false, want true")
	}
	admitted := 0
	for range 10 {
		d, err := allow(lim, ctx, own)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			admitted++
		}
		clk.Advance(10 * time.Millisecond)
	}
	// Ten seconds on (five return periods), b still down and the route
	// still called now and then: a third client on a fares the same.
	for range 20 {
		allow(lim, ctx, route...)
		clk.Advance(500 * time.Millisecond)
	}
	later := 0
	for range 10 {
		if d, err := allow(lim, ctx, sluice.Check{Key: "a-client-later", Limit: own.Limit, Cost: 1}); err == nil && d.Allowed {
			later++
		}
		clk.Advance(10 * time.Millisecond)
	}
	a := f.Stats().Nodes["a"]
	if admitted != 10 || later != 10 || a.FallbackDecisions != 0 || a.StoreErrors != 0 {
		t.Errorf("a client whose keys are all on the healthy node a: %d of 10 admitted on a limit of 10 (the primary had room), "+
			"10 s later another %d of 10; node a: %+v: want all 10 decided by the primary, none a fallback",
			admitted, later, a)
	}
}

// The units that calls spanning a down node admit locally on a healthy
// node's key are charged there at once, on each instance that admitted
// them, so that the primary deciding the key alone never admits beyond
// the shared limit for want of another instance's charge. Two instances,
// a key on a limited to 10 an hour and asked both with a key of the down
// node b and alone: each instance's share (5) admits its spanning calls,
// charged at once; the calls on a alone, decided by the primary, find
// the 10 counted: 10 admitted in all, not 15.
func TestAHealthyNodeReturnsTheLimitsAFallbackAdmittedThereBecauseOfAnother(t *testing.T) {
	clk := storetest.NewClock()
	remote := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	defer remote.Close()
	down := &nodeStore{next: remote}
	down.down.Store("b")
	var instances []*sluice.Limiter
	for range 2 {
		primary, f := onNodes(t, clk, remote, failover.Options{
			Charge: func(ctx context.Context, checks []sluice.Check) error {
				return chargeLeft(ctx, remote, down, checks)
			}})
		primary.down.Store("b")
		instances = append(instances, sluice.NewLimiter(f))
	}
	ctx := context.Background()
	per := sluice.FixedWindow(10, time.Hour).Named("per")
	global := sluice.FixedWindow(1000, time.Hour).Named("global")
	route := []sluice.Check{{Key: "a-k", Limit: per, Cost: 1}, {Key: "b-global", Limit: global, Cost: 1}}
	total := 0
	ask := func(lim *sluice.Limiter, checks ...sluice.Check) {
		d, err := allow(lim, ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			total++
		}
		clk.Advance(10 * time.Millisecond)
	}
	for _, lim := range instances {
		for range 10 {
			ask(lim, route...)
		}
	}
	for range 10 { // the first instance, a-k alone
		ask(instances[0], route[0])
	}
	for range 10 { // the second, a-k alone: its units charged first
		ask(instances[1], route[0])
	}
	if total > 10 {
		t.Errorf("%d admitted on a-k of a limit of 10 an hour: a healthy node's key decided by the primary alone beside another instance's uncharged units", total)
	}
	t.Logf("%d admitted of 10", total)
}

// chargeLeft takes up to each check's Cost of what primary has left, as
// Redis's Charge does, unless a check's node is the one down names: then
// it takes nothing and fails, the error naming the node, as Redis's
// Charge on a Cluster names the master that failed.
func chargeLeft(ctx context.Context, primary sluice.Store, down *nodeStore, checks []sluice.Check) error {
	for i := range checks {
		if d, _ := down.down.Load().(string); d != "" && nodeOf(&checks[i]) == d {
			return nodeDown(d)
		}
	}
	for _, c := range checks {
		out := make([]sluice.Status, 1)
		peek := []sluice.Check{{Key: c.Key, Limit: c.Limit}}
		if err := primary.Apply(ctx, peek, out); err != nil {
			return err
		}
		if take := min(c.Cost, out[0].Remaining); take > 0 {
			peek[0].Cost = take
			if err := primary.Apply(ctx, peek, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// onNodes returns a failover over a primary of remote whose checks' keys
// name their node (nodeOf), one of two instances, its breaker on clk, and
// a local store of its own, its calls bounded by a minute unless o says
// otherwise; o gives the charge.
func onNodes(t *testing.T, clk *storetest.Clock, remote sluice.Store, o failover.Options) (*namingStore, *failover.Store) {
	t.Helper()
	local := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	primary := &namingStore{nodeStore{next: remote}}
	o.Node, o.Instances, o.Breaker = nodeOf, 2, failover.BreakerOptions{Clock: clk.Now}
	if o.Timeout == 0 {
		// Which node is down is the test's choice: a call to a healthy
		// node that a loaded machine delays past the default 50 ms would
		// make it down too.
		o.Timeout = time.Minute
	}
	return primary, mustFailover(primary, local, o)
}
