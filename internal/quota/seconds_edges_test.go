package quota

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// CeilSeconds rounds up to whole seconds
// "saturated at sluice.Never's seconds" — also for the durations just below
// Never, which a µs figure converted to a Duration reaches (the largest,
// MaxInt64/1000 µs, is Never - 807 ns): rounding those up must not wrap
// into a negative header value.
func TestCeilSecondsSaturatesJustBelowNever(t *testing.T) {
	never := int64(sluice.Never / time.Second)
	for _, d := range []time.Duration{
		sluice.Never,
		sluice.Never - 1,
		sluice.Never - 807, // MaxInt64/1000 µs as a Duration
		time.Duration(int64(sluice.Never/time.Microsecond)-5) * time.Microsecond, // 5 µs below that
		sluice.Never - time.Second + 1,
		sluice.Never - time.Second,
	} {
		if got := CeilSeconds(d); got != never {
			t.Errorf("CeilSeconds(Never - %d ns) = %d, want %d (saturated)", int64(sluice.Never-d), got, never)
		}
	}
	// Well below the bound it rounds up exactly, and never decreases.
	if got := CeilSeconds(sluice.Never - 3*time.Second/2); got != never {
		t.Errorf("CeilSeconds(Never - 1.5 s) = %d, want %d", got, never)
	}
	if got := CeilSeconds(sluice.Never - 5*time.Second/2); got != never-1 {
		t.Errorf("CeilSeconds(Never - 2.5 s) = %d, want %d", got, never-1)
	}
}
