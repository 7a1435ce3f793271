package overlimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/overlimit"
)

// The zero Cache has no store behind it: every call, Invalidate and Reset
// included, returns (or is) nothing worse than an error wrapping
// sluice.ErrStoreUnavailable, never a panic.
func TestZeroCacheFailsWithoutPanicking(t *testing.T) {
	var c overlimit.Cache
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.FixedWindow(1, time.Second), Cost: 1}}
	c.Invalidate("k")
	c.Reset()
	if st := c.Stats(); st != (overlimit.Stats{}) {
		t.Errorf("Stats: %+v, want zero", st)
	}
	if err := c.Apply(ctx, checks, make([]sluice.Status, 1)); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Apply: %v, want ErrStoreUnavailable", err)
	}
	if err := c.Refund(ctx, checks, []int64{7}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Refund: %v, want ErrStoreUnavailable", err)
	}
	if err := c.Release(ctx, checks, []int64{7}); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Release: %v, want ErrStoreUnavailable", err)
	}
}
