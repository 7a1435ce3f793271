package client

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Pins FormatLegacy's doc comment ("In every format, a reset above 10^9 is
// read as Unix seconds") and RateLimit.Reset's ("at most
// sluice.MaxWindow"): a reset of exactly 10^9 is not above 10^9, so it is a
// delta of 10^9 seconds, which saturates at sluice.MaxWindow; one more is
// a Unix time (2001-09-09T01:46:41Z), long past: a Reset of 0.
func TestAResetOfExactlyTenToTheNineIsADelta(t *testing.T) {
	date := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		reset string
		want  time.Duration
	}{
		{"1000000000", sluice.MaxWindow},
		{"1000000001", 0},
	} {
		h := http.Header{}
		h.Set("Date", date.Format(http.TimeFormat))
		h.Set("X-RateLimit-Limit", "10")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", c.reset)
		rl, ok := ParseRateLimit(h, date)
		if !ok || rl.Reset != c.want {
			t.Errorf("X-RateLimit-Reset: %s: Reset %v (ok %v), want %v", c.reset, rl.Reset, ok, c.want)
		}
	}
}
