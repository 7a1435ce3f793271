package quota

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Pins Seconds' contract (its doc comment; docs/headers.md: "0 ≤ t ≤ w"):
// t is never above w. A sliding counter is full again only after almost
// two windows, but its t says at most w. 100 a minute, 45 remaining, full
// again in 90 s: w = 60, so t = 60.
func TestASlidingCountersTIsCappedAtItsWindow(t *testing.T) {
	qt := Of(sluice.SlidingCounter(100, time.Minute))
	if qt.W != 60 {
		t.Fatalf("w = %d, want 60", qt.W)
	}
	if got := qt.Seconds(45, 90*time.Second, 0); got != 60 {
		t.Errorf("t = %d with 90 s to full, want w = 60", got)
	}
	// Below w it is the wait itself, rounded up.
	if got := qt.Seconds(45, 30*time.Second+time.Millisecond, 0); got != 31 {
		t.Errorf("t = %d with 30.001 s to full, want 31", got)
	}
}

// Pins Until's contract (its doc comment; docs/headers.md: Retry-After is
// "≥ t of every violated policy"): for a refused check, Until is never
// after its RetryAfter, when the check fits. A fixed window of 10 a minute
// whose window ends in 50 s, refusing with a RetryAfter of 20 s: Until is
// 20 s and t is 20, not 50.
func TestARefusedChecksUntilIsNeverAfterItsRetryAfter(t *testing.T) {
	qt := Of(sluice.FixedWindow(10, time.Minute))
	if got := qt.Until(0, 50*time.Second, 20*time.Second); got != 20*time.Second {
		t.Errorf("Until = %v, want the RetryAfter, 20s", got)
	}
	if got := qt.Seconds(0, 50*time.Second, 20*time.Second); got != 20 {
		t.Errorf("t = %d, want 20", got)
	}
	// An admitted check (RetryAfter 0) keeps its reset.
	if got := qt.Until(3, 50*time.Second, 0); got != 50*time.Second {
		t.Errorf("admitted: Until = %v, want 50s", got)
	}
}
