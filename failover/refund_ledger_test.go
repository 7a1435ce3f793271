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

// A refund of a local decision already charged to the primary stays
// charged there, and takes nothing from what the ledger owes for later
// decisions: 3 admitted locally in one window and charged, then 2 in the
// next, still owed, then the 3 refunded (too late for the local window,
// which has passed): the primary must still be charged the 2 (before: the
// refund took them out of the ledger, and the primary never counted them).
func TestARefundOfAChargedDecisionLeavesLaterUnitsOwed(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{}, &charged)
	ctx := context.Background()
	l := sluice.FixedWindow(10, time.Minute)
	three := sluice.Check{Key: "k", Limit: l, Cost: 3}

	r.primary.Fail(errors.New("down"))
	d := r.allow(t, three)
	r.primary.Fail(nil)
	r.allow(t, sluice.Check{Key: "k", Limit: l}) // returns: charges the 3
	if charged.Load() != 3 {
		t.Fatalf("%d charged on the return, want 3", charged.Load())
	}
	r.clk.Advance(time.Minute) // the next window, the return period over
	r.primary.Fail(errors.New("down again"))
	r.allow(t, sluice.Check{Key: "k", Limit: l, Cost: 2})
	if err := r.limiter.Refund(ctx, []sluice.Check{three}, &d); err != nil {
		t.Fatal(err)
	}
	r.primary.Fail(nil)
	r.allow(t, sluice.Check{Key: "k", Limit: l})
	if got := charged.Load(); got != 5 {
		t.Errorf("%d charged in all, want 5: the 2 of the second window owed", got)
	}
}
