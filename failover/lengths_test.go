package failover_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/storetest"
)

// Statuses, leases or charges not one per check are the caller's error,
// never a store failure nor a panic: with the primary answering and with it
// down (where each policy answers on its own).
func TestMismatchedLengthsAreInvalidChecks(t *testing.T) {
	ctx := context.Background()
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.FixedWindow(10, 60e9), Cost: 1},
		{Key: "k", Limit: sluice.Concurrency(2, 30e9), Cost: 1},
	}
	for _, policy := range []failover.OnError{failover.Local, failover.Allow, failover.Deny} {
		r := newFailoverRig(t, failover.Options{OnError: policy})
		for _, line := range storetest.Mismatched(ctx, r.failover, checks) {
			t.Errorf("%v, primary up: %s", policy, line)
		}
		r.primary.Fail(errors.New("down"))
		for range 10 { // past the breaker's threshold
			r.allow(t, checks[0])
		}
		for _, line := range storetest.Mismatched(ctx, r.failover, checks) {
			t.Errorf("%v, primary down: %s", policy, line)
		}
		if n := r.primary.Failures.Load(); n == 0 {
			t.Errorf("%v: the primary never failed", policy)
		}
	}
}
