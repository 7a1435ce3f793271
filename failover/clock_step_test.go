package failover_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// A clock set back (an NTP step, an operator) while a node returns does
// not lengthen its return period: the period ends four OpenFor of elapsed
// time after the probe, however the clock reads.
func TestAClockSetBackDoesNotLengthenTheReturnPeriod(t *testing.T) {
	r, check, _ := outage(t)
	for range failover.DefaultBreakerFailures {
		r.allow(t, check)
	}
	r.primary.Fail(nil)
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	r.allow(t, check) // the probe: the return period begins
	if st := r.failover.Stats(); st.Returning != 1 {
		t.Fatalf("after the probe: %+v, want returning", st)
	}
	r.clk.Advance(-time.Hour)
	r.failover.Stats() // the Store reads its clock, set back
	r.clk.Advance(4*failover.DefaultBreakerOpenFor + time.Millisecond)
	if st := r.failover.Stats(); st.Returning != 0 {
		t.Errorf("%v after the probe, the clock set back an hour meanwhile: %+v, want the return period over", 4*failover.DefaultBreakerOpenFor+time.Millisecond, st)
	}
	check.Key = "other"
	r.allow(t, check)
	if st := r.failover.Stats(); st.Returning != 0 {
		t.Errorf("a call after the return period: %+v, want none returning", st)
	}
}

// A clock set back while the breaker is open does not keep it open longer:
// the probe goes OpenFor of elapsed time after the breaker opened.
func TestAClockSetBackDoesNotKeepTheBreakerOpen(t *testing.T) {
	r := newFailoverRig(t, failover.Options{})
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	r.primary.Fail(errors.New("down"))
	for range failover.DefaultBreakerFailures {
		r.allow(t, check)
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerOpen {
		t.Fatalf("stats %+v, want open", st)
	}
	r.primary.Fail(nil)
	r.clk.Advance(-time.Hour)
	r.allow(t, check) // the breaker reads its clock, set back, and keeps the call away
	r.clk.Advance(failover.DefaultBreakerOpenFor)
	calls := r.primary.Calls.Load()
	r.allow(t, check)
	if r.primary.Calls.Load() == calls {
		t.Errorf("OpenFor after the breaker opened, the clock set back an hour meanwhile: no probe reached the primary")
	}
	if st := r.failover.Stats(); st.Breaker != failover.BreakerClosed {
		t.Errorf("stats %+v, want closed after the probe", st)
	}
}
