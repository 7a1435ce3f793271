package failover_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// changedLimits returns a limit and the same limit raised (a reload: 10 an
// hour to 20 an hour), under one ID and so one state per key.
func changedLimits(t *testing.T) (before, after sluice.Limit) {
	t.Helper()
	before, after = sluice.FixedWindow(10, time.Hour), sluice.FixedWindow(20, time.Hour)
	if before.ID() != after.ID() {
		t.Fatalf("IDs %q and %q differ", before.ID(), after.ID())
	}
	return before, after
}

// recoverPrimary brings r's primary back and lets the return period pass, each
// of its calls on k charging what k owes.
func recoverPrimary(t *testing.T, r *failoverRig, k sluice.Check) {
	t.Helper()
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, k)
	r.clk.Advance(10 * time.Second) // past the return period
	r.allow(t, k)
}

// A limit changed during an outage under the same ID keeps its key's one
// state, on the primary and locally, and its one account in the ledger:
// the units admitted locally under either limit are charged to the primary
// after the outage, under the limit in force (a charge takes at most what
// the local state holds under it). Stats.Uncharged counts only the units
// of a full ledger or of a Store without a Charge. 5 units admitted under
// 10 an hour, 3 under 20 an hour: 8 charged (before: 5, Uncharged 3, which
// the primary admitted again).
func TestUnitsAdmittedUnderAChangedLimitAreCharged(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Instances: 1}, &charged)
	before, after := changedLimits(t)
	r.primary.Fail(errors.New("down"))
	for range failover.DefaultBreakerFailures { // open the breaker: 5 units admitted locally
		r.allow(t, sluice.Check{Key: "k", Limit: before, Cost: 1})
	}
	for range 3 {
		if !r.allow(t, sluice.Check{Key: "k", Limit: after, Cost: 1}).Allowed {
			t.Fatal("refused by the fallback")
		}
	}
	recoverPrimary(t, r, sluice.Check{Key: "k", Limit: after})
	if st := r.failover.Stats(); charged.Load() != 8 || st.Uncharged != 0 {
		t.Errorf("after the outage: %d of the 8 units admitted locally charged, Stats.Uncharged %d", charged.Load(), st.Uncharged)
	}
}

// A refund of a local decision takes its units out of the account its key
// and limit ID keep, whatever limit of that ID the account is under now: a
// refund by the receipt of a decision made before the limit changed
// leaves the other 7 of 8 units charged (before: 4, the 3 admitted under
// the new limit uncharged).
func TestARefundUnderAChangedLimitTakesItsUnitsOut(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Instances: 1}, &charged)
	before, after := changedLimits(t)
	r.primary.Fail(errors.New("down"))
	old := sluice.Check{Key: "k", Limit: before, Cost: 1}
	var last sluice.Decision
	for range failover.DefaultBreakerFailures {
		last = r.allow(t, old)
	}
	for range 3 {
		r.allow(t, sluice.Check{Key: "k", Limit: after, Cost: 1})
	}
	if err := r.limiter.Refund(context.Background(), []sluice.Check{old}, &last); err != nil {
		t.Fatal(err)
	}
	recoverPrimary(t, r, sluice.Check{Key: "k", Limit: after})
	if st := r.failover.Stats(); charged.Load() != 7 || st.Uncharged != 0 {
		t.Errorf("after the outage: %d charged, Stats.Uncharged %d; want the 7 units admitted and not refunded",
			charged.Load(), st.Uncharged)
	}
}
