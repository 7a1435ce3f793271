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

// A breaker moved only by calls stays open on an instance that gets none
// (idle, or whose requests a degradation level refuses before they are
// decided) however long the primary has been back, and so does the health
// it reports (Stats.Breaker: a server's store_down, its dashboard and
// gauges). A probe asks the primary once OpenFor has passed, without a
// call: under Local with a ChargeOnce it charges what the instance owes,
// and the node returns, as after a call's probe. It is no decision and no
// store error.
func TestAnIdleInstancesBreakerClosesByAProbeOnceThePrimaryIsBack(t *testing.T) {
	r, o := newOnceRig(t, failover.Options{})
	o.set(false, true) // the charges fail too
	l := sluice.FixedWindow(10, time.Hour)
	for range failover.DefaultBreakerFailures {
		r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 1})
	}
	sent := len(o.calls())
	before := r.failover.Stats()
	if before.Breaker != failover.BreakerOpen {
		t.Fatalf("breaker %v after %d failures, want open", before.Breaker, failover.DefaultBreakerFailures)
	}
	r.primary.Fail(nil) // back; no call comes
	o.set(false, false)

	r.failover.Probe(context.Background())
	if got := len(o.calls()) - sent; got != 0 || r.failover.Stats().Breaker != failover.BreakerOpen {
		t.Fatalf("a probe before OpenFor passed: %d charge calls, breaker %v; want none, open", got, r.failover.Stats().Breaker)
	}
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.failover.Probe(context.Background())

	st := r.failover.Stats()
	if st.Breaker != failover.BreakerClosed || st.Returning != 1 {
		t.Errorf("after a probe of a primary that is back: breaker %v, %d nodes returning; want closed, 1", st.Breaker, st.Returning)
	}
	if st.StoreErrors != before.StoreErrors || st.FallbackDecisions != before.FallbackDecisions {
		t.Errorf("a probe counted: %d store errors, %d fallbacks; want %d, %d", st.StoreErrors, st.FallbackDecisions,
			before.StoreErrors, before.FallbackDecisions)
	}
	out := make([]sluice.Status, 1)
	if err := r.remote.Apply(context.Background(), []sluice.Check{{Key: "k", Limit: l}}, out); err != nil || out[0].Remaining != 5 {
		t.Errorf("the primary: %+v, %v; want 5 left: the probe charges the 5 admitted locally", out[0], err)
	}
}

// A probe of a primary still down opens the breaker again for another
// OpenFor, as a call's failed probe does; the next probe waits for it.
func TestAProbeOfAPrimaryStillDownOpensTheBreakerAgain(t *testing.T) {
	r := newFailoverRig(t, failover.Options{OnError: failover.Deny})
	r.primary.Fail(storetest.ErrRedisDown)
	for range failover.DefaultBreakerFailures {
		r.allow(t, sluice.Check{Key: "k", Limit: sluice.PerMinute(10), Cost: 1})
	}
	calls := r.primary.Calls.Load()
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.failover.Probe(context.Background())
	st := r.failover.Stats()
	if got := r.primary.Calls.Load() - calls; got != 1 || st.Breaker != failover.BreakerOpen || st.BreakerOpens != 2 {
		t.Errorf("probe of a primary down: %d calls, breaker %v, %d opens; want 1, open, 2", got, st.Breaker, st.BreakerOpens)
	}
	if st.StoreErrors != int64(failover.DefaultBreakerFailures) || st.FallbackDecisions != int64(failover.DefaultBreakerFailures) {
		t.Errorf("%d store errors, %d fallbacks; want the calls' %d each", st.StoreErrors, st.FallbackDecisions, failover.DefaultBreakerFailures)
	}
	r.primary.Fail(nil)
	r.failover.Probe(context.Background())
	if got := r.primary.Calls.Load() - calls; got != 1 {
		t.Errorf("%d calls: a probe went before the breaker's new OpenFor passed", got)
	}
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.failover.Probe(context.Background())
	if b := r.failover.Stats().Breaker; b != failover.BreakerClosed {
		t.Errorf("breaker %v after a probe of a primary that is back, want closed", b)
	}
}

// RunProbes, run beside the Store, closes a breaker that no call goes
// through within about OpenFor of the primary's return, and returns once
// its context is done.
func TestRunProbesClosesTheBreakerOfAnIdleStore(t *testing.T) {
	remote := memory.New()
	t.Cleanup(func() { remote.Close() })
	primary := &storetest.Flaky{Next: remote}
	const openFor = 20 * time.Millisecond
	f := mustFailover(primary, nil, failover.Options{OnError: failover.Allow,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: openFor}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.RunProbes(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	primary.Fail(storetest.ErrRedisDown)
	lim := sluice.NewLimiter(f)
	if _, err := allow(lim, context.Background(), sluice.Check{Key: "k", Limit: sluice.PerMinute(10), Cost: 1}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * openFor) // probes fail meanwhile
	if b := f.Stats().Breaker; b == failover.BreakerClosed {
		t.Fatalf("breaker closed while the primary is down")
	}
	primary.Fail(nil)
	back := time.Now()
	for f.Stats().Breaker != failover.BreakerClosed {
		if time.Since(back) > 2*time.Second {
			t.Fatalf("breaker %v 2s after the primary came back, with RunProbes running (%d calls reached it)", f.Stats().Breaker, primary.Calls.Load())
		}
		time.Sleep(time.Millisecond)
	}
	if calls := primary.Calls.Load(); calls < 3 {
		t.Errorf("%d calls reached the primary, want the call and at least two probes", calls)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("RunProbes still running 1s after its context ended")
	}
}

// Probe of the zero Store does nothing, and its RunProbes returns once
// its context is done.
func TestTheZeroStoreProbesNothing(t *testing.T) {
	var f failover.Store
	f.Probe(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.RunProbes(ctx)
}
