package server

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sim"
)

// shorten scales the spike's start and length and the diurnal period that
// a pattern sets by the ratio of its new duration to its old one, leaves
// those it does not set to their defaults (which follow the duration or
// the window), and keeps a spike's start within the new duration.
func TestShortenScalesTheTimingAPatternSets(t *testing.T) {
	d := func(s string) sim.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return sim.Duration(v)
	}
	for _, c := range []struct {
		name     string
		in, want sim.Pattern
		from, to string
	}{
		{"a spike at 8m of 10m is at 5m36s of 7m",
			sim.Pattern{SpikeAt: d("8m")}, sim.Pattern{SpikeAt: d("5m36s"), Duration: d("7m")}, "10m", "7m"},
		{"a spike's length and a period shorten alike",
			sim.Pattern{SpikeLength: d("50s"), Period: d("5m")}, sim.Pattern{SpikeLength: d("10s"), Period: d("1m"), Duration: d("2m")}, "10m", "2m"},
		{"unset timings stay unset",
			sim.Pattern{}, sim.Pattern{Duration: d("2m")}, "10m", "2m"},
		{"a spike at the last microsecond stays within the duration",
			sim.Pattern{SpikeAt: d("9m59.9999996s")}, sim.Pattern{SpikeAt: d("1m59.999999s"), Duration: d("2m")}, "10m", "2m"},
		{"an unchanged duration changes nothing",
			sim.Pattern{SpikeAt: d("8m"), Period: d("5m")}, sim.Pattern{SpikeAt: d("8m"), Period: d("5m"), Duration: d("10m")}, "10m", "10m"},
	} {
		p := c.in
		shorten(&p, d(c.from), d(c.to))
		if p != c.want {
			t.Errorf("%s: got spike at %v lasting %v, period %v, duration %v; want %v, %v, %v, %v", c.name,
				p.SpikeAt, p.SpikeLength, p.Period, p.Duration, c.want.SpikeAt, c.want.SpikeLength, c.want.Period, c.want.Duration)
		}
	}
}
