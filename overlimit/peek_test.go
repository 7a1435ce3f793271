package overlimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
)

// Capacity that comes back through another instance (its refund, an
// operator's reset there) reaches this cache by no Invalidate; but a peek
// through it (cost 0, which always goes to the store) that finds the
// remembered cost available again shows the denial wrong: the next call of
// that cost must go to the store, which admits it, not be refused for the
// rest of the remembered wait.
func TestAPeekThatFindsRoomEndsARememberedRefusal(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.FixedWindow(2, time.Hour),
		sluice.SlidingLog(2, time.Hour),
		sluice.SlidingCounter(2, time.Hour),
		sluice.LeakyBucket(2, time.Hour),
		sluice.TokenBucket(2, time.Hour),
		sluice.GCRA(2, time.Hour),
	} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			clk := storetest.NewClock()
			mem := memory.New(memory.WithClock(clk.Now), memory.WithSweepInterval(0))
			defer mem.Close()
			a := sluice.NewLimiter(overlimit.New(mem, overlimit.Options{Clock: clk.Now}))
			b := sluice.NewLimiter(mem) // another instance
			check := sluice.Check{Key: "k", Limit: l, Cost: 1}
			for i := range 2 {
				if d, err := allow(b, context.Background(), check); err != nil || !d.Allowed {
					t.Fatalf("call %d: %+v, %v", i, d, err)
				}
			}
			if d, err := allow(a, context.Background(), check); err != nil || d.Allowed {
				t.Fatalf("a's call past the limit: %+v, %v; want refused", d, err)
			}
			mem.Reset("k", []sluice.Limit{l}) // an operator's reset through b
			peek, err := allow(a, context.Background(), sluice.Check{Key: "k", Limit: l})
			if err != nil || peek.Remaining < 1 {
				t.Fatalf("a's peek after the reset: %+v, %v; want room", peek, err)
			}
			if d, err := allow(a, context.Background(), check); err != nil || !d.Allowed {
				t.Errorf("a's call after its peek found 1 left: allowed %v (RetryAfter %v), %v; the store admits it", d.Allowed, d.RetryAfter, err)
			}
		})
	}
}
