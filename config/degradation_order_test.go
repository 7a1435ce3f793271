package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A level's enter threshold below a lower level's for the same signal
// (high at in_flight: 300 under elevated's 500, a typo of a digit) is
// refused at its line: a load between the two entered the higher level
// straight from normal, refusing writes where only expensive endpoints were
// meant to pause, and the lower level was never entered by that signal.
// Equal thresholds, and thresholds of different signals, load.
func TestDegradationEnterBelowALowerLevelsIsRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ levels, want string }{
		{"{elevated: {enter: {in_flight: 500}}, high: {enter: {in_flight: 300}}}",
			`d.yaml:3:87: degradation.levels.high.enter.in_flight: 300 is below elevated's 500`},
		{"{high: {enter: {p99: 5s}}, critical: {enter: {p99: 2s, in_flight: 9000}}}",
			`d.yaml:3:74: degradation.levels.critical.enter.p99: 2s is below high's 5s`},
		{"{elevated: {enter: {cpu: 0.9}}, critical: {enter: {cpu: 0.8}}}",
			`d.yaml:3:79: degradation.levels.critical.enter.cpu: 0.8 is below elevated's 0.9`},
		{"{critical: {enter: {error_rate: 0.1}}, elevated: {enter: {error_rate: 0.2}}}",
			`d.yaml:3:55: degradation.levels.critical.enter.error_rate: 0.1 is below elevated's 0.2`},
		{"{elevated: {enter: {in_flight: 500}}, high: {enter: {in_flight: 500}}}", ""},
		{"{elevated: {enter: {in_flight: 500}}, high: {enter: {p99: 1s}}, critical: {enter: {in_flight: 2000}}}", ""},
		{"{elevated: {enter: {in_flight: 500}, leave: {in_flight: 100}}, high: {enter: {in_flight: 1000}, leave: {in_flight: 50}}}", ""},
	} {
		_, err := config.Parse("d.yaml", []byte(plans+"degradation: {levels: "+c.levels+"}\n"))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.levels, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %s", c.levels, err, c.want)
		}
	}
}
