package memory_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A receipt of a charge that Reset forgot is never refunded into the state
// the key builds since, even for a call decided while the reset runs: the
// reset's time is read once the key's entry is held, after every decision
// that held it. Were it read before, a call decided in between would hold
// a receipt later than the reset and be refunded into the fresh state,
// which never counted it: one admission more than the limit in the window.
// The clock runs the call at Reset's read of the time.
func TestARefundOfACallDecidedDuringResetLeavesTheFreshState(t *testing.T) {
	ctx := context.Background()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(2, time.Hour).Named("hourly"),
		sluice.SlidingCounter(2, time.Hour).Named("counted"),
	} {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			var us atomic.Int64
			us.Store(sluice.MicrosSinceEpoch(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)))
			var hook atomic.Pointer[func()]
			s := memory.New(memory.WithSweepInterval(0), memory.WithClock(func() time.Time {
				t := us.Add(1) // every read 1 µs later: a running clock
				if f := hook.Swap(nil); f != nil {
					(*f)() // runs after this read, before the reader goes on
				}
				return sluice.TimeFromMicros(t)
			}))
			defer s.Close()
			lim := sluice.NewLimiter(s)
			checks := []sluice.Check{{Key: "client", Limit: limit, Cost: 1}}
			spend := func() (sluice.Decision, bool) {
				var d sluice.Decision
				if err := lim.Allow(ctx, checks, &d); err != nil {
					t.Fatal(err)
				}
				return d, d.Allowed
			}
			if _, ok := spend(); !ok {
				t.Fatal("first refused")
			}
			// The call in flight when the operator resets the client,
			// sent just after Reset read its time: it is decided before
			// Reset forgets the state (the reset's time then follows its
			// receipt), or waits for Reset and is decided in the fresh
			// state.
			var during sluice.Decision
			var wg sync.WaitGroup
			f := func() {
				wg.Go(func() {
					var d sluice.Decision
					if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
						t.Errorf("call during the reset: %+v, %v", d, err)
					}
					during = sluice.Decision{Allowed: true, Statuses: append([]sluice.Status(nil), d.Statuses...)}
				})
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(200 * time.Millisecond): // it waits for Reset
				}
			}
			hook.Store(&f)
			if n := s.Reset("client", []sluice.Limit{limit}); n != 1 {
				t.Fatalf("Reset forgot %d, want 1", n)
			}
			wg.Wait()
			admitted := 0
			for range 4 {
				if _, ok := spend(); ok {
					admitted++
				}
			}
			// The response of the call in flight gives its cost back.
			charged := during.Statuses[0].Charged
			if err := lim.Refund(ctx, checks, &during); err != nil {
				t.Fatal(err)
			}
			for range 4 {
				if _, ok := spend(); ok {
					admitted++
				}
			}
			if admitted != 2 {
				t.Errorf("%d admitted after the reset, the limit is 2: the receipt of a call the reset forgot (charged at %d) was refunded into the fresh state",
					admitted, charged)
			}
		})
	}
}
