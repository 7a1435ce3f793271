package failover_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// A key the fallback meets for the first time since the primary's last
// answer on it starts from ⌊R/n⌋ of the R that answer said was left (see
// Store). The last word is kept in the memo (Options.Remember), and whether
// the fallback has started from it is kept with it: a full ledger
// (Options.Ledger) costs only the charge-back of the units it cannot keep
// account of (Stats.Uncharged), never the last word. Two instances, a
// ledger of 1, a key b the primary had exhausted: once another key's
// account fills the ledger, b must still start from ⌊0/2⌋ = 0 (before: it
// started from a whole share and admitted 5).
func TestAFullLedgerKeepsThePrimarysLastWord(t *testing.T) {
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Instances: 2, Ledger: 1}, &charged)
	l := sluice.FixedWindow(10, time.Minute)
	a := sluice.Check{Key: "a", Limit: l, Cost: 1}
	b := sluice.Check{Key: "b", Limit: l, Cost: 1}
	r.allow(t, a)
	for range 10 {
		r.allow(t, b) // the primary's last word on b: 0 of 10 left
	}
	r.primary.Fail(errors.New("down"))
	r.allow(t, a) // the first key decided locally fills the ledger of 1
	admitted := 0
	for range 10 {
		if r.allow(t, b).Allowed {
			admitted++
		}
	}
	if admitted != 0 {
		t.Errorf("the fallback admitted %d on b, want 0: the primary said 0 of 10 were left (⌊0/2⌋); "+
			"a full ledger (Stats.Uncharged %d) should cost the charge-back, not the last word",
			admitted, r.failover.Stats().Uncharged)
	}
}

// Options.Ledger bounds the keys that admitted units locally and are not
// charged yet: an account opens with the first units admitted, so the
// local decisions that admitted nothing — peeks (cost 0) and calls the
// share refuses — take no room. Otherwise, while the breaker is open (no
// call charges), a client's refused requests on keys of its own would fill
// the ledger and leave a legitimate key's admissions uncharged, admitted
// again by the primary after the outage. Two instances (a share of 5 of
// 10), a ledger of 2: calls on p and x that admit nothing, then 3 units
// admitted on z, all 3 charged after the outage (before: none, Uncharged 3).
func TestKeysThatAdmittedNothingTakeNoRoomInTheLedger(t *testing.T) {
	for _, tc := range []struct {
		name string
		cost int64 // of the calls on p and x
	}{
		{"peeks", 0},
		{"calls the share refuses", 6}, // within the limit of 10, beyond the share of 5
	} {
		t.Run(tc.name, func(t *testing.T) {
			var charged atomic.Int64
			r := newChargingRig(t, failover.Options{Instances: 2, Ledger: 2}, &charged)
			l := sluice.FixedWindow(10, time.Hour)
			r.primary.Fail(errors.New("down"))
			for range failover.DefaultBreakerFailures { // open the breaker
				if r.allow(t, sluice.Check{Key: "p", Limit: l, Cost: tc.cost}).Allowed && tc.cost > 0 {
					t.Fatal("p admitted by the fallback")
				}
			}
			r.allow(t, sluice.Check{Key: "x", Limit: l, Cost: tc.cost})
			z := sluice.Check{Key: "z", Limit: l, Cost: 1}
			for range 3 {
				if !r.allow(t, z).Allowed {
					t.Fatal("z refused by the fallback")
				}
			}
			r.primary.Fail(nil)
			r.clk.Advance(failover.DefaultBreakerOpenFor)
			r.allow(t, z)
			if st := r.failover.Stats(); charged.Load() < 3 || st.Uncharged != 0 {
				t.Errorf("after the outage: %d charged to the primary, Stats.Uncharged %d; want the 3 units z "+
					"admitted locally charged: p and x admitted nothing", charged.Load(), st.Uncharged)
			}
		})
	}
}
