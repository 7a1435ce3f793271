package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// releasingFlaky is a flaky primary whose leases live in its remote store.
type releasingFlaky struct {
	*storetest.Flaky
	r sluice.Releaser
}

func (s *releasingFlaky) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if err := s.Err(); err != nil {
		return err
	}
	return s.r.Release(ctx, checks, leases)
}

// The primary and the local store stamp their leases with their own
// clocks, and two leases of one key may carry the same microsecond: one
// taken on the primary, one taken locally while the primary failed.
// Releasing the local lease must not free the primary's, which is still
// held: the next call on the primary is refused.
func TestReleaseOfALocalLeaseLeavesThePrimarysLeaseOfTheSameStamp(t *testing.T) {
	r := newFailoverRig(t, failover.Options{})
	primary := &releasingFlaky{Flaky: r.primary, r: r.remote}
	f := mustFailover(primary, r.local, failover.Options{Breaker: failover.BreakerOptions{Clock: r.clk.Now}})
	lim := sluice.NewLimiter(f)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}

	onPrimary, err := allow(lim, ctx, checks...)
	if err != nil || !onPrimary.Allowed {
		t.Fatalf("on the primary: %+v, %v", onPrimary, err)
	}
	r.primary.Fail(storetest.ErrRedisDown) // one failure: the breaker stays closed
	onLocal, err := allow(lim, ctx, checks...)
	if err != nil || !onLocal.Allowed {
		t.Fatalf("on the local store: %+v, %v", onLocal, err)
	}
	r.primary.Fail(nil)
	if err := lim.Release(ctx, checks, &onLocal); err != nil {
		t.Fatalf("releasing the local lease: %v", err)
	}
	if d, err := allow(lim, ctx, checks...); err != nil || d.Allowed {
		t.Fatalf("after the local lease's release: %+v, %v; want a refusal, the primary's lease is still held", d, err)
	}
	if err := lim.Release(ctx, checks, &onPrimary); err != nil {
		t.Fatalf("releasing the primary's lease: %v", err)
	}
	if d, err := allow(lim, ctx, checks...); err != nil || !d.Allowed {
		t.Fatalf("after both releases: %+v, %v; want the slot free", d, err)
	}
}
