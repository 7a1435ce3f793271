package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// A reload that lengthens a limit's window keeps what clients spent for as
// long as the limit now in force counts it: a state that a refused call
// reads — decided holding its key's entry, under the shard's mutex beside a
// new state, or beside the array as a sliding log — outlives the expiry its
// last write under the old limit gave it, and a sweep past that expiry
// keeps it (see conformance.RunLengthenedWindows).
func TestAStateARefusedCallReadsOutlivesTheExpiryOfAShorterWindow(t *testing.T) {
	clock := conformance.NewClock(time.Date(2026, 1, 5, 10, 0, 1, 0, time.UTC)) // an hour's start, and a second
	s := memory.New(memory.WithClock(clock.Now), memory.WithClockResolution(0), memory.WithSweepInterval(0))
	defer s.Close()
	conformance.RunLengthenedWindows(t, s, "reload", func() {
		clock.Advance(3 * time.Minute)
		s.Sweep()
	})
}

// A refusal under the limit that wrote a state keeps it no longer than that
// limit counts it: swept once its window has passed, it is forgotten.
func TestARefusalUnderTheSameLimitKeepsAStateNoLonger(t *testing.T) {
	base := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	now := base
	s := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithClockResolution(0), memory.WithSweepInterval(0))
	defer s.Close()
	l := sluice.SlidingLog(1, time.Minute).Named("quota")
	decide := func() sluice.Status {
		out := make([]sluice.Status, 1)
		if err := s.Apply(context.Background(), []sluice.Check{{Key: "client", Limit: l, Cost: 1}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0]
	}
	now = base.Add(time.Second)
	decide()
	now = base.Add(30 * time.Second)
	if decide().Allowed {
		t.Fatal("a 2nd request within the minute admitted")
	}
	now = base.Add(63 * time.Second) // past the expiry, rounded up to a second
	if n := s.Sweep(); n != 1 {
		t.Errorf("a sweep past the window forgot %d states, want 1", n)
	}
}

// A request decided before a reload that lengthens its limit's window (the
// same name: the state is kept) ends after it, and its lease is released,
// or its charge refunded (a limit counting by the answer), under the Limit
// that decided it, as httplimit's Done does. That leaves the state's
// expiry where the limit in force set it: a sweep past the old window's
// end keeps the state of a request admitted under the new limit, which
// still counts it, as the Redis store's scripts keep a key's TTL. A state
// forgotten then would let the limit admit past its quantity.
func TestAGiveBackUnderTheOldLimitKeepsTheExpiryOfTheNewOne(t *testing.T) {
	ctx := context.Background()
	release := func(lim *sluice.Limiter, c []sluice.Check, d *sluice.Decision) error { return lim.Release(ctx, c, d) }
	refund := func(lim *sluice.Limiter, c []sluice.Check, d *sluice.Decision) error { return lim.Refund(ctx, c, d) }
	for _, tc := range []struct {
		name     string
		limit    func(quantity int64, window time.Duration) sluice.Limit
		giveBack func(*sluice.Limiter, []sluice.Check, *sluice.Decision) error
	}{
		{"released lease", sluice.Concurrency, release},
		{"refunded fixed window", sluice.FixedWindow, refund},
		{"refunded sliding log", sluice.SlidingLog, refund},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := conformance.NewClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) // an hour's start
			store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			defer store.Close()
			lim := sluice.NewLimiter(store)
			before := tc.limit(2, time.Minute).Named("streams")
			after := tc.limit(2, time.Hour).Named("streams")
			allow := func(l sluice.Limit) ([]sluice.Check, sluice.Decision) {
				t.Helper()
				c := []sluice.Check{{Key: "user:1", Limit: l, Cost: 1}}
				var d sluice.Decision
				if err := lim.Allow(ctx, c, &d); err != nil {
					t.Fatal(err)
				}
				return c, d
			}
			a, da := allow(before) // in flight when the reload comes
			clock.Advance(time.Second)
			_, db := allow(after) // admitted under the reloaded limit, counted for the hour
			if !da.Allowed || !db.Allowed {
				t.Fatalf("admitted %v and %v, want both", da.Allowed, db.Allowed)
			}
			clock.Advance(time.Second)
			if err := tc.giveBack(lim, a, &da); err != nil { // the first ends
				t.Fatal(err)
			}
			clock.Advance(2 * time.Minute) // past the old window, within the new one
			store.Sweep()
			admitted := 0
			for range 3 {
				if _, d := allow(after); d.Allowed {
					admitted++
				}
			}
			if admitted != 1 {
				t.Errorf("with 1 of 2 counted for the hour, %d more admitted, want 1: the give-back under the old limit had the sweep forget the state", admitted)
			}
		})
	}
}
