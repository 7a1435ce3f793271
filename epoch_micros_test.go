package sluice_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// MicrosSinceEpoch rounds down, before Epoch too: 1 ns before it is µs
// -1, not 0, so that a time never reads as later than it is.
func TestMicrosSinceEpochRoundsDownBeforeEpoch(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{-time.Nanosecond, -1}, {-999 * time.Nanosecond, -1}, {-time.Microsecond, -1}, {-1001 * time.Nanosecond, -2}, {time.Nanosecond, 0}} {
		if got := sluice.MicrosSinceEpoch(sluice.Epoch.Add(c.d)); got != c.want {
			t.Errorf("MicrosSinceEpoch(Epoch%+v) = %d, want %d", c.d, got, c.want)
		}
	}
}
