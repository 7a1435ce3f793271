package memory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// WithMaxLimits sets the bound; Stats counts the limits known and the
// calls refused for naming one beyond it.
func TestWithMaxLimitsBoundsTheLimitsAStoreKnows(t *testing.T) {
	store, _, _ := newStore(t, memory.WithMaxLimits(3), memory.WithSweepInterval(0))
	ctx := context.Background()
	out := make([]sluice.Status, 2)
	known := []sluice.Check{
		{Key: "a", Limit: sluice.FixedWindow(10, time.Second), Cost: 1},
		{Key: "a", Limit: sluice.SlidingLog(10, time.Minute), Cost: 1},
	}
	if err := store.Apply(ctx, known, out); err != nil {
		t.Fatal(err)
	}
	// One more fits; per-second under another algorithm is another limit.
	third := []sluice.Check{{Key: "b", Limit: sluice.TokenBucket(10, time.Second), Cost: 1}}
	if err := store.Apply(ctx, third, out[:1]); err != nil {
		t.Fatal(err)
	}
	fourth := []sluice.Check{known[0], {Key: "b", Limit: sluice.GCRA(5, time.Hour), Cost: 1}}
	err := store.Apply(ctx, fourth, out)
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("a fourth limit: error %v, want one wrapping sluice.ErrStoreUnavailable", err)
	}
	// The refused call decided nothing: a has spent 1 of its 10.
	if err := store.Apply(ctx, known[:1], out[:1]); err != nil || out[0].Remaining != 8 {
		t.Fatalf("per-second of a after the refused call: %v, remaining %d, want 8", err, out[0].Remaining)
	}
	st := store.Stats()
	if st.Limits != 3 || st.LimitsRefused != 1 {
		t.Errorf("Stats: Limits %d, LimitsRefused %d; want 3 and 1", st.Limits, st.LimitsRefused)
	}
}
