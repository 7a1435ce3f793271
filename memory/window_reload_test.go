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
