package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A lease the fallback took was taken under this instance's share of the
// limit (Instances > 1): giving it back must reach that state, so that
// the unit is free again for the next call, as a local refund's is.
func TestALocalLeaseIsReleasedUnderTheShare(t *testing.T) {
	r, _, _ := outage(t) // two instances, primary down
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(4, time.Minute), Cost: 1}}
	var held []sluice.Decision
	for range 2 { // the share of 4 for one of 2
		d, err := allow(r.limiter, context.Background(), checks...)
		if err != nil || !d.Allowed {
			t.Fatalf("a lease within the share: %+v, %v", d, err)
		}
		held = append(held, d)
	}
	if d, _ := allow(r.limiter, context.Background(), checks...); d.Allowed {
		t.Fatal("a third lease admitted beyond the share of 2")
	}
	if err := r.limiter.Release(context.Background(), checks, &held[0]); err != nil && !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("Release: %v", err)
	}
	if d, err := allow(r.limiter, context.Background(), checks...); err != nil || !d.Allowed {
		t.Errorf("after a lease was given back: allowed %v (RetryAfter %v), %v; want the freed unit", d.Allowed, d.RetryAfter, err)
	}
	if d, _ := allow(r.limiter, context.Background(), checks...); d.Allowed {
		t.Error("two leases admitted after one was given back: the release freed the other too")
	}
}
