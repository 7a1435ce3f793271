package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A receipt given before a Reset is not refunded into the fresh state,
// which never counted its charge (a request in flight when an operator
// reset its client, answered with a status that gives its cost back): the
// key is never admitted beyond its limit in the window, as on Redis. A
// receipt given after the reset is refunded as usual.
func TestARefundAfterAResetLeavesTheFreshStateAlone(t *testing.T) {
	ctx := context.Background()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(10, time.Hour).Named("hourly"),
		sluice.SlidingCounter(10, time.Hour).Named("counted"),
		sluice.SlidingLog(10, time.Hour).Named("logged"),
	} {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
			s := memory.New(memory.WithSweepInterval(0), memory.WithClock(func() time.Time { return now }))
			defer s.Close()
			lim := sluice.NewLimiter(s)
			checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
			spend := func() (sluice.Decision, bool) {
				t.Helper()
				now = now.Add(time.Millisecond)
				var d sluice.Decision
				if err := lim.Allow(ctx, checks, &d); err != nil {
					t.Fatal(err)
				}
				return d, d.Allowed
			}
			var before []sluice.Decision
			for range 5 {
				d, ok := spend()
				if !ok {
					t.Fatal("refused before the reset")
				}
				before = append(before, sluice.Decision{Allowed: true, Statuses: append([]sluice.Status(nil), d.Statuses...)})
			}
			now = now.Add(time.Millisecond)
			s.Reset("client", []sluice.Limit{limit})
			admitted := 0
			var after sluice.Decision
			for range 10 {
				if d, ok := spend(); ok {
					admitted++
					after = sluice.Decision{Allowed: true, Statuses: append([]sluice.Status(nil), d.Statuses...)}
				}
			}
			for i := range before {
				if err := lim.Refund(ctx, checks, &before[i]); err != nil {
					t.Fatal(err)
				}
			}
			for range 10 {
				if _, ok := spend(); ok {
					admitted++
				}
			}
			if admitted != 10 {
				t.Errorf("%d admitted after the reset, the limit is 10: refunds of receipts from before it were taken from the fresh state", admitted)
			}
			if err := lim.Refund(ctx, checks, &after); err != nil {
				t.Fatal(err)
			}
			if _, ok := spend(); !ok {
				t.Error("a receipt from after the reset was not refunded")
			}
		})
	}
}
