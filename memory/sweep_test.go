package memory_test

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// TestPropertySweepNeverChangesADecision: a store swept after every call
// decides every call as one never swept, whatever the algorithm, costs and
// pauses (of up to half an hour, past the expiry of limits of a minute and
// an hour): a state is forgotten only once it is equivalent to a fresh one,
// so the expiry each path (one check or several, with or without the
// shard's mutex) leaves in an entry must be the state's.
func TestPropertySweepNeverChangesADecision(t *testing.T) {
	limits := []sluice.Limit{
		sluice.GCRA(5, time.Second).Named("a"),
		sluice.TokenBucket(3, 200*time.Millisecond).Named("b"),
		sluice.LeakyBucket(4, time.Second).Named("c"),
		sluice.FixedWindow(3, time.Second).Named("d"),
		sluice.SlidingCounter(4, time.Second).Named("e"),
		sluice.SlidingLog(3, time.Second).Named("f"),
		sluice.GCRA(7, 3*time.Second).WithBurst(2).Named("g"),
		sluice.GCRA(10, time.Hour).Named("h"),
		sluice.TokenBucket(6, time.Minute).Named("i"),
	}
	type pair struct {
		key   string
		limit sluice.Limit
	}
	var pairs []pair
	for _, k := range []string{"k1", "k2"} {
		for _, l := range limits {
			pairs = append(pairs, pair{k, l})
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		clock := newClock()
		swept := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		kept := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
		defer swept.Close()
		defer kept.Close()
		ctx := context.Background()
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			ms := rapid.OneOf(rapid.Int64Range(0, 1500), rapid.Int64Range(0, 1_800_000)).Draw(t, "ms")
			clock.Advance(time.Duration(ms) * time.Millisecond)
			// Distinct states: a call naming one twice is invalid (see
			// sluice.ValidateChecks).
			n := rapid.IntRange(1, 3).Draw(t, "checks")
			checks := make([]sluice.Check, 0, n)
			for _, p := range rapid.Permutation(pairs).Draw(t, "states")[:n] {
				checks = append(checks, sluice.Check{Key: p.key, Limit: p.limit, Cost: rapid.Int64Range(0, 3).Draw(t, "cost")})
			}
			if err := sluice.ValidateChecks(checks); err != nil {
				t.Fatal(err)
			}
			got, want := make([]sluice.Status, n), make([]sluice.Status, n)
			if err := swept.Apply(ctx, checks, got); err != nil {
				t.Fatal(err)
			}
			if err := kept.Apply(ctx, checks, want); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("step %d, check %d (%v): swept store %+v, unswept %+v", step, i, checks[i].Limit, got[i], want[i])
				}
			}
			swept.Sweep()
		}
	})
}
