package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// The store reports the time it decided at, by its own clock, for one
// check and for several, and the Limiter hands it on as Decision.At.
func TestDecisionsCarryTheStoresTime(t *testing.T) {
	s, lim, clock := newStore(t)
	clock.Advance(1500 * time.Microsecond)
	want := clock.Now()
	ctx := context.Background()
	one := []sluice.Check{{Key: "k", Limit: sluice.PerSecond(10), Cost: 1}}
	many := append(one, sluice.Check{Key: "k", Limit: sluice.PerMinute(100), Cost: 1})
	for _, checks := range [][]sluice.Check{one, many} {
		out := make([]sluice.Status, len(checks))
		now, err := s.ApplyTimed(ctx, checks, out)
		if err != nil || now != sluice.MicrosSinceEpoch(want) {
			t.Errorf("%d checks: ApplyTimed = %d, %v; want %d", len(checks), now, err, sluice.MicrosSinceEpoch(want))
		}
		var d sluice.Decision
		if err := lim.AllowInto(ctx, &d, checks); err != nil || !d.At.Equal(want) {
			t.Errorf("%d checks: Decision.At = %v (%v), want %v", len(checks), d.At, err, want)
		}
	}
	// Without WithClock: the wall time at New plus the monotonic time since.
	// (Rounded down to microseconds twice, and the two clocks may drift
	// apart a little: a millisecond of slack.)
	real := memory.New(memory.WithSweepInterval(0))
	defer real.Close()
	before := time.Now()
	var d sluice.Decision
	if err := sluice.NewLimiter(real).AllowInto(ctx, &d, one); err != nil {
		t.Fatal(err)
	}
	if after := time.Now(); d.At.Before(before.Add(-time.Millisecond)) || d.At.After(after.Add(time.Millisecond)) {
		t.Errorf("Decision.At = %v, not between %v and %v", d.At, before, after)
	}
}
