package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// Reset counts only the states the store held: a key never seen, under a
// limit the store knows from another key, is none, with or without
// WithoutExpiryForTesting, which changes only how a state past its expiry
// is read (a conformance test compares Reset's count with the Redis
// store's and the reference's).
func TestResetCountsNoStateOfAKeyNeverSeen(t *testing.T) {
	l := sluice.FixedWindow(3, time.Minute).Named("quota")
	for _, tc := range []struct {
		name string
		opts []memory.Option
	}{
		{"default", nil},
		{"WithoutExpiryForTesting", []memory.Option{memory.WithoutExpiryForTesting()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := conformance.NewClock(time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC))
			s := memory.New(append([]memory.Option{memory.WithClock(clock.Now), memory.WithSweepInterval(0)}, tc.opts...)...)
			defer s.Close()
			out := make([]sluice.Status, 1)
			if err := s.Apply(context.Background(), []sluice.Check{{Key: "seen", Limit: l, Cost: 1}}, out); err != nil {
				t.Fatal(err)
			}
			if n := s.Reset("never-seen", []sluice.Limit{l}); n != 0 {
				t.Errorf("Reset of a key never seen forgot %d states, want 0", n)
			}
			if n := s.Reset("seen", []sluice.Limit{l}); n != 1 {
				t.Errorf("Reset of a key seen forgot %d states, want 1", n)
			}
		})
	}
}
