package failover_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
)

// The zero Store has no stores: its calls are errors, its Stats and Forget
// do nothing, and none panics.
func TestZeroStoreHasNoStores(t *testing.T) {
	var f failover.Store
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.PerMinute(1), Cost: 1}}
	for what, err := range map[string]error{
		"Apply":   f.Apply(ctx, checks, make([]sluice.Status, 1)),
		"Release": f.Release(ctx, checks, []int64{1}),
		"Refund":  f.Refund(ctx, checks, []int64{1}),
	} {
		if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: %v, want ErrStoreUnavailable", what, err)
		}
	}
	f.Forget("k", []sluice.Limit{sluice.PerMinute(1)})
	if st := f.Stats(); st.StoreErrors != 0 || st.FallbackDecisions != 0 || len(st.Nodes) != 0 {
		t.Errorf("Stats: %+v", st)
	}
}
