package sluice

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice/internal/algo"
)

// timeFromMicros is time.UnixMicro of the µs since the Unix epoch,
// saturated, at every time: its short path and its long one.
func TestPropertyTimeFromMicrosIsUnixMicro(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		us := rapid.OneOf(
			rapid.Int64Range(0, maxFastMicros+10),
			rapid.Int64Range(-10, 10),
			rapid.Int64(),
			rapid.SampledFrom([]int64{math.MinInt64, math.MaxInt64, maxFastMicros, maxFastMicros + 1, 999_999, 1_000_000}),
		).Draw(t, "us")
		want := time.UnixMicro(algo.AddSat(us, epochUnixMicro))
		if got := timeFromMicros(us); got != want {
			t.Fatalf("timeFromMicros(%d) = %v, want %v", us, got, want)
		}
	})
}
