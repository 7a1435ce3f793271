package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// A receipt given at the very µs of a Reset is "at or before the reset"
// (sluice.Refunder) and refunds nothing, also when the key has been
// charged afresh in that µs since (a clock that stands still, or one of
// WithClockResolution's coarse ticks): charged 1 of 2 at T, reset at T,
// charged 2 afresh at T, the key keeps its fresh count of 2 after the
// first receipt's refund, and a third check is refused. For a sliding log
// the receipt names the instant of the fresh log's entries too: the
// store remembers its reset as it does a window's.
func TestReceiptAtTheResetsMicrosecondRefundsNothing(t *testing.T) {
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second)) // stands still
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(2, time.Hour).Named("hourly"),
		sluice.SlidingCounter(2, time.Hour).Named("counted"),
		sluice.SlidingLog(2, time.Hour).Named("logged"),
	} {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			lim := sluice.NewLimiter(store)
			checks := []sluice.Check{{Key: "reset-same-us-" + limit.Name(), Limit: limit, Cost: 1}}
			var first sluice.Decision
			if err := lim.Allow(ctx, checks, &first); err != nil || !first.Allowed {
				t.Fatalf("first check: %v %+v", err, first)
			}
			receipt := sluice.Decision{Allowed: true, Statuses: append([]sluice.Status(nil), first.Statuses...)}
			store.Reset(checks[0].Key, []sluice.Limit{limit})
			for i := range 2 {
				var d sluice.Decision
				if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
					t.Fatalf("fresh check %d after the reset: %v %+v", i, err, d)
				}
			}
			if err := lim.Refund(ctx, checks, &receipt); err != nil {
				t.Fatal(err)
			}
			var d sluice.Decision
			if err := lim.Allow(ctx, checks, &d); err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				t.Fatal("a third check after the reset was admitted: the receipt from the reset's µs was refunded into the fresh state")
			}
		})
	}
}
