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
