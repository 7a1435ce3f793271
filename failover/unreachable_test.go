package failover_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// A node that failed to answer a call made around the Store is returned
// to as after a failure of the Store's own: Direct is false, the next call
// returns (share and primary together) and starts the return period, and
// Direct is true again once that period is over.
func TestAnUnreachableNodeIsReturnedTo(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Instances: 2}, &charged)
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	r.allow(t, check)
	if !r.failover.Direct([]sluice.Check{check}) {
		t.Fatal("a healthy primary: Direct is false")
	}
	r.failover.Unreachable("")
	if r.failover.Direct([]sluice.Check{check}) {
		t.Error("after Unreachable: Direct is true, want false until the node has been returned to")
	}
	r.allow(t, check)
	if st := r.failover.Stats(); st.Returning != 1 || st.FallbackDecisions != 0 {
		t.Errorf("the call after Unreachable: %+v, want a return period begun and the primary's decision", st)
	}
	r.clk.Advance(4*failover.DefaultBreakerOpenFor + failover.DefaultTimeout)
	if !r.failover.Direct([]sluice.Check{check}) {
		t.Errorf("after the return period: Direct is false (%+v)", r.failover.Stats())
	}
}

// Under Allow and Deny, and without a Charge, nothing returns:
// Unreachable does nothing.
func TestUnreachableWithoutARecoveryChargeDoesNothing(t *testing.T) {
	for _, p := range []failover.OnError{failover.Allow, failover.Deny} {
		r := newFailoverRig(t, failover.Options{OnError: p})
		check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
		r.failover.Unreachable("")
		if !r.failover.Direct([]sluice.Check{check}) {
			t.Errorf("%v: Direct false after Unreachable", p)
		}
	}
	var zero failover.Store
	zero.Unreachable("")
}
