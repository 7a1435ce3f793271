package failover_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// TestAnAnsweredCallAllocatesNothing: a call the primary answers costs the
// failover no allocation of its own, for a plan's checks on one key as for
// one check, with the primary bounding its own round trips (Timeout < 0,
// as redis.Open wires it; a Timeout of the Store's own is a context with a
// deadline, allocated per call).
func TestAnAnsweredCallAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	primary, local := memory.New(), memory.New()
	t.Cleanup(func() { primary.Close(); local.Close() })
	f, err := failover.New(primary, local, failover.Options{Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	never := sluice.GCRA(1_000_000, time.Second).WithBurst(sluice.MaxQuantity)
	for _, n := range []int{1, 3} {
		checks := make([]sluice.Check, n)
		for i := range checks {
			checks[i] = sluice.Check{Key: "k", Limit: never.Named("l" + string(rune('a'+i))), Cost: 1}
		}
		out := make([]sluice.Status, n)
		if err := f.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(200, func() {
			if err := f.Apply(ctx, checks, out); err != nil || !out[0].Allowed {
				t.Fatalf("Apply: %v, %+v", err, out[0])
			}
		})
		if allocs != 0 {
			t.Errorf("%d checks: %.1f allocations a call, want 0", n, allocs)
		}
	}
}
