package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A receipt given at the very µs of a Reset is "at or before the reset"
// (sluice.Refunder) and refunds nothing, also when the key has been
// charged afresh in that µs since: a clock that stands still charges 1 of
// 2 at T (the receipt), resets at T, charges 2 afresh at T; after the
// first receipt's refund the key keeps its fresh count of 2, so a third
// check is refused. refund_charge.lua skips a receipt at or before its key's
// reset key, equal included.
func TestReceiptAtTheResetsMicrosecondRefundsNothing(t *testing.T) {
	receiptAtTheResetsMicrosecond(t, sluice.FixedWindow(2, time.Hour).Named("hourly"),
		sluice.SlidingCounter(2, time.Hour).Named("counted"))
}

// The same for a sliding log, whose receipt names its entry's instant,
// which the log charged afresh at T holds as well: Reset leaves a reset
// key beside a sliding log too, for its window and a second.
func TestSlidingLogReceiptAtTheResetsMicrosecondRefundsNothing(t *testing.T) {
	receiptAtTheResetsMicrosecond(t, sluice.SlidingLog(2, time.Hour).Named("logged"))
}

// receiptAtTheResetsMicrosecond runs the case of
// TestReceiptAtTheResetsMicrosecondRefundsNothing for each of limits.
func receiptAtTheResetsMicrosecond(t *testing.T, limits ...sluice.Limit) {
	clock := conformance.NewClock(conformance.DefaultStart.Add(17 * time.Second)) // stands still
	store := redis.New(redistest.Standalone(t).Client(t), redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
	ctx := context.Background()
	for _, limit := range limits {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			lim := sluice.NewLimiter(store)
			checks := []sluice.Check{{Key: "reset-same-us-" + limit.Name(), Limit: limit, Cost: 1}}
			var first sluice.Decision
			if err := lim.Allow(ctx, checks, &first); err != nil || !first.Allowed {
				t.Fatalf("first check: %v %+v", err, first)
			}
			receipt := sluice.Decision{Allowed: true, Statuses: append([]sluice.Status(nil), first.Statuses...)}
			if _, err := store.Reset(ctx, checks[0].Key, []sluice.Limit{limit}); err != nil {
				t.Fatal(err)
			}
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
