package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// lateContext is a context whose deadline has passed before its timer
// ended it, as a loaded machine leaves one for a while.
type lateContext struct{ context.Context }

func (lateContext) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// A call that fails once its caller's deadline has passed failed for the
// caller's lack of time, even while its context has not ended yet: no
// store error is counted (none fed to the breaker) and the caller is told
// it gave up.
func TestACallFailedPastItsCallersDeadlineIsNoStoreError(t *testing.T) {
	f := mustFailover(failingPrimary{}, nil, failover.Options{OnError: failover.Deny, Timeout: time.Minute})
	check := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Hour), Cost: 1}}
	err := f.Apply(lateContext{context.Background()}, check, make([]sluice.Status, 1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call failed past its caller's deadline: %v, want one wrapping context.DeadlineExceeded", err)
	}
	if n := f.Stats().StoreErrors; n != 0 {
		t.Errorf("%d store errors counted for a call failed past its caller's deadline, want 0", n)
	}
}

// failingSides is a primary whose decisions, releases and refunds all fail
// as a store that cannot be reached.
type failingSides struct{ failingPrimary }

func (failingSides) Release(context.Context, []sluice.Check, []int64) error {
	return sluice.ErrStoreUnavailable
}

func (failingSides) Refund(context.Context, []sluice.Check, []int64) error {
	return sluice.ErrStoreUnavailable
}

// A Release or a Refund that fails once its caller's deadline has passed
// counts no store error, as a decision failed so counts none.
func TestAReleaseOrRefundFailedPastItsCallersDeadlineIsNoStoreError(t *testing.T) {
	check := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	for _, side := range []string{"release", "refund"} {
		f := mustFailover(failingSides{}, nil, failover.Options{OnError: failover.Deny, Timeout: time.Minute})
		ctx := lateContext{context.Background()}
		var err error
		if side == "release" {
			err = f.Release(ctx, check, []int64{12345})
		} else {
			err = f.Refund(ctx, check, []int64{12345})
		}
		if err == nil {
			t.Fatalf("%s on a failing primary: no error", side)
		}
		if n := f.Stats().StoreErrors; n != 0 {
			t.Errorf("%s failed past its caller's deadline: %d store errors counted, want 0 (as Apply counts none)", side, n)
		}
	}
}
