package memory_test

import (
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/memory"
)

// The memory store decides every conformance scenario exactly as
// sluice.DecideBatch does. Its sweep is off, and it decides on states past
// their expiry as they stand: the reference never forgets a state, and
// neither may the store while the test clock leaps ahead (nor does the
// Redis store, whose keys outlive the test clock).
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T, clock *conformance.Clock) sluice.Store {
		s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithoutExpiryForTesting())
		t.Cleanup(func() { s.Close() })
		return s
	})
}
