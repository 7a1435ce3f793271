package failover_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// A fallback that started before the primary's answer to a call made
// around the Store arrived (redis.Leased's take of a lease, in flight when
// the primary failed) started from the remainder the Store knew before
// that take. Heard lowers it to this instance's share of what the primary
// then said was left, less what the fallback has admitted since it
// started: the take's units are not admitted twice.
func TestHeardLowersAFallbackAlreadyStarted(t *testing.T) {
	for _, instances := range []int{1, 2} {
		r := newFailoverRig(t, failover.Options{})
		var charged atomic.Int64
		f := mustFailover(r.primary, r.local, failover.Options{Instances: instances,
			Breaker: failover.BreakerOptions{Clock: r.clk.Now},
			Charge:  func(ctx context.Context, checks []sluice.Check) error { return chargeRemote(ctx, r, checks, &charged) }})
		lim := sluice.NewLimiter(f)
		allowed := func(c sluice.Check) bool {
			d, err := allow(lim, context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			return d.Allowed
		}
		k := sluice.Check{Key: "k", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}
		for range 10 {
			if !allowed(k) {
				t.Fatalf("instances %d: refused on the primary", instances)
			}
		}
		r.primary.Fail(storetest.ErrRedisDown)
		local := 0
		for range 5 {
			if allowed(k) {
				local++
			}
		}
		// The take in flight when the primary failed reaches it: 50 units
		// leased, 40 left of 100.
		f.Heard([]sluice.Check{k}, []sluice.Status{{Allowed: true, Remaining: 40, ResetAfter: time.Hour}}, nil)
		for range 200 {
			if allowed(k) {
				local++
			}
		}
		if want := 40 / instances; local > want {
			t.Errorf("instances %d: %d admitted by the fallback, want at most %d: this instance's share of the 40 the primary said were left", instances, local, want)
		}
		if local == 0 {
			t.Errorf("instances %d: the fallback admitted nothing", instances)
		}
	}
}
