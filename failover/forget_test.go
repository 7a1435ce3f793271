package failover_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// After the primary's state of a key is reset, a fallback on the key starts
// from its whole share, not from what the primary said before the reset.
func TestForgetDropsThePrimarysLastWordOnAKey(t *testing.T) {
	r := newFailoverRig(t, failover.Options{Instances: 2})
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Minute), Cost: 1}
	for range 10 {
		r.allow(t, check) // the primary has nothing left of k
	}
	if n := r.remote.Reset(check.Key, []sluice.Limit{check.Limit}); n != 1 {
		t.Fatalf("the primary's reset forgot %d states, want 1", n)
	}
	r.failover.Forget(check.Key, []sluice.Limit{check.Limit})
	r.primary.Fail(errors.New("down"))
	admitted := 0
	for range 10 {
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if admitted != 5 {
		t.Errorf("the fallback admitted %d after the reset, want the share of 5 (without Forget: 0)", admitted)
	}
}

// Units a fallback admitted on a key and has not charged to the primary are
// forgiven by Forget: after the reset, the key's quota at the primary is
// whole.
func TestForgetForgivesUnitsNotYetCharged(t *testing.T) {
	r, check, charged := outage(t)
	for range 3 {
		if !r.allow(t, check).Allowed {
			t.Fatal("the fallback refused a call within its share")
		}
	}
	// The reset, as redis.Guarded.Reset makes it: the primary, the local
	// store, the failover.
	r.remote.Reset(check.Key, []sluice.Limit{check.Limit})
	r.local.Reset(check.Key, []sluice.Limit{check.Limit})
	r.failover.Forget(check.Key, []sluice.Limit{check.Limit})
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	admitted := 0
	if r.allow(t, check).Allowed { // the probe, which starts a return period
		admitted++
	}
	r.clk.Advance(10 * time.Second) // past the return period, within the window
	for range 11 {
		if r.allow(t, check).Allowed {
			admitted++
		}
	}
	if charged.Load() != 0 || admitted != 10 {
		t.Errorf("after the reset: %d charged, %d admitted; want 0 and the limit's 10", charged.Load(), admitted)
	}
	if st := r.failover.Stats(); st.Uncharged != 0 {
		t.Errorf("stats %+v: nothing should be uncharged", st)
	}
}
