package failover_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// timeBack returns how long after the primary answers again, on the rig's
// clock, its calls are decided by the primary alone (breaker closed, no
// node returning), with a call every step: fails calls failed, step apart,
// then the primary answered every call but the calls of failAgain (counted
// from its return), which failed.
func timeBack(t *testing.T, fails int, step time.Duration, failAgain ...int) time.Duration {
	t.Helper()
	var charged atomic.Int64
	r := newChargingRig(t, failover.Options{Instances: 4}, &charged)
	check := sluice.Check{Key: "k", Limit: sluice.FixedWindow(1_000_000, time.Hour), Cost: 1}
	r.primary.Fail(errors.New("timeout"))
	for range fails {
		r.allow(t, check)
		r.clk.Advance(step)
	}
	r.primary.Fail(nil)
	call := 0
	for back := time.Duration(0); back < time.Minute; back += step {
		again := false
		for _, n := range failAgain {
			again = again || n == call
		}
		if again {
			r.primary.Fail(errors.New("timeout"))
		}
		r.allow(t, check)
		r.primary.Fail(nil)
		call++
		if st := r.failover.Stats(); st.Breaker == failover.BreakerClosed && st.Returning == 0 {
			return back
		}
		r.clk.Advance(step)
	}
	return time.Minute
}

// How long a Store takes, after its primary answers again, to decide on
// the primary alone, with the default breaker and a Charge: the return
// period (4 × DefaultBreakerOpenFor, 2 s) from its first successful call
// after a failure that left the breaker closed, and from its successful
// probe, at most DefaultBreakerOpenFor after the last failure, once the
// failures opened it. Each call that fails meanwhile (a timeout under
// load) is a new failure: the return period starts again from the next
// success. This is the bound the package documents (Store: Recovery).
func TestTheTimeBackToThePrimaryIsBounded(t *testing.T) {
	const returnFor = 4 * failover.DefaultBreakerOpenFor
	for _, step := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond} {
		for _, fails := range []int{1, 2, failover.DefaultBreakerFailures - 1} {
			if got := timeBack(t, fails, step); got != returnFor {
				t.Errorf("%d failures, a call every %v: on the primary alone %v after it answered, want the return period's %v", fails, step, got, returnFor)
			}
		}
		for _, fails := range []int{failover.DefaultBreakerFailures, failover.DefaultBreakerFailures + 1, 50} {
			if got, most := timeBack(t, fails, step), failover.DefaultBreakerOpenFor+returnFor; got > most {
				t.Errorf("%d failures, a call every %v: on the primary alone %v after it answered, want at most %v", fails, step, got, most)
			}
		}
	}
	// One call that fails 1 s into the return period: 2 s from the next.
	step := 10 * time.Millisecond
	if got, want := timeBack(t, 1, step, 100), 100*step+step+returnFor; got != want {
		t.Errorf("a failure 1 s into the return period: on the primary alone %v after the primary answered, want %v", got, want)
	}
}
