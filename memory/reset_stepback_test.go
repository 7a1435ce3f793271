package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A Reset is noted at a time no earlier than any receipt it forgets, even
// when an injected clock (WithClock of the wall time, set back by NTP or
// an operator) stepped back between the charges and the reset: Refund
// never takes a charge from before the reset out of the state counted
// since, so the key is admitted at most its limit in the window after the
// reset, as a clock stepping back never creates capacity.
func TestARefundAfterAResetAfterAClockStepBackLeavesTheFreshStateAlone(t *testing.T) {
	ctx := context.Background()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(10, time.Hour).Named("hourly"),
		sluice.SlidingCounter(10, time.Hour).Named("counted"),
	} {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			now := time.Date(2026, 12, 4, 12, 30, 0, 0, time.UTC)
			s := memory.New(memory.WithSweepInterval(0), memory.WithClock(func() time.Time { return now }))
			defer s.Close()
			checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
			spend := func() (sluice.Status, bool) {
				t.Helper()
				now = now.Add(time.Millisecond)
				out := make([]sluice.Status, 1)
				if err := s.Apply(ctx, checks, out); err != nil {
					t.Fatal(err)
				}
				return out[0], out[0].Allowed
			}
			var receipts []int64
			for range 5 {
				st, ok := spend()
				if !ok {
					t.Fatal("refused before the reset")
				}
				receipts = append(receipts, st.Charged)
			}
			now = now.Add(-10 * time.Minute) // the clock steps back, within the hour
			s.Reset("client", []sluice.Limit{limit})
			admitted := 0
			for range 10 {
				if _, ok := spend(); ok {
					admitted++
				}
			}
			for _, r := range receipts {
				if err := s.Refund(ctx, checks, []int64{r}); err != nil {
					t.Fatal(err)
				}
			}
			for range 10 {
				if _, ok := spend(); ok {
					admitted++
				}
			}
			if admitted > 10 {
				t.Errorf("%d admitted after the reset in one window of a limit of 10: receipts from before the reset were refunded into the fresh state", admitted)
			}
		})
	}
}
