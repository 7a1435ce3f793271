package failover_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// Direct is true only while the primary alone decides a key, as Apply lets
// it: not while the breaker is open, not while this instance owes the
// primary what it admitted locally, not in the return period that follows,
// and again once that period is over.
func TestDirectOnlyWhileThePrimaryAloneDecides(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Breaker: failover.BreakerOptions{Failures: 1, OpenFor: time.Second}}, &charged)
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	other := sluice.Check{Key: "other", Limit: check.Limit, Cost: 1}
	direct := func(step string, want bool, checks ...sluice.Check) {
		t.Helper()
		if got := r.failover.Direct(checks); got != want {
			t.Errorf("%s: Direct(%v) = %v, want %v (stats %+v)", step, checks[0].Key, got, want, r.failover.Stats())
		}
	}
	r.allow(t, check)
	direct("primary healthy", true, check)

	r.primary.Fail(errors.New("down"))
	r.allow(t, check) // fails: the breaker opens, decided and owed locally
	direct("breaker open", false, check)
	r.clk.Advance(time.Second)
	r.primary.Fail(nil)
	direct("breaker due to probe, not probed yet", false, check)

	r.allow(t, other) // the probe: it returns, and charges what it can
	direct("returning", false, check)
	direct("returning, another key", false, other)
	r.clk.Advance(4 * time.Second) // the return period: four OpenFor
	direct("return period just over, a return call may still be charging", false, check)
	r.clk.Advance(failover.DefaultTimeout)
	r.allow(t, check) // charges check's account
	if got := charged.Load(); got != 1 {
		t.Fatalf("charged %d units to the primary, want the 1 admitted locally", got)
	}
	direct("everything charged, period over", true, check, other)
}

// The zero Store is never direct.
func TestDirectOfTheZeroStore(t *testing.T) {
	var f failover.Store
	if f.Direct([]sluice.Check{{Key: "k", Limit: sluice.PerSecond(1), Cost: 1}}) {
		t.Error("the zero Store is direct")
	}
}

// With Timeout negative, a return call is bounded by ChargeTimeout: after
// the return period Direct stays false that long, as drain waits, not a
// second.
func TestDirectWaitsTheChargeTimeoutAfterTheReturnPeriod(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Timeout: -1, ChargeTimeout: 3 * time.Second,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: time.Second}}, &charged)
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	other := sluice.Check{Key: "other", Limit: check.Limit, Cost: 1}
	r.allow(t, check)
	r.primary.Fail(errors.New("down"))
	r.allow(t, check) // the breaker opens: decided and owed locally
	r.clk.Advance(time.Second)
	r.primary.Fail(nil)
	r.allow(t, other)              // the probe: the return period starts
	r.clk.Advance(4 * time.Second) // the return period: four OpenFor
	r.clk.Advance(2 * time.Second) // more than a second, less than ChargeTimeout
	if r.failover.Direct([]sluice.Check{other}) {
		t.Error("Direct 2 s after the return period, with ChargeTimeout 3 s: a return call may still be charging")
	}
	r.clk.Advance(time.Second)
	r.allow(t, check) // charges check's account
	if !r.failover.Direct([]sluice.Check{check, other}) {
		t.Errorf("not Direct past ChargeTimeout with everything charged (stats %+v)", r.failover.Stats())
	}
}
