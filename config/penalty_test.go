package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A penalty section names its three fields, each problem at its own:
// one left out is missing (not a zero duration, nor no penalty box).
func TestPenaltyFieldsAreEachLocated(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct{ penalty, want string }{
		{"penalty: {refusals: 3, for: 10m}\n", `p.yaml:3:10: penalty.within: missing`},
		{"penalty: {within: 1m, for: 10m}\n", `p.yaml:3:10: penalty.refusals: missing`},
		{"penalty: {}\n", `p.yaml:3:10: penalty.refusals: missing`},
		{"penalty:\n", `p.yaml:3:9: penalty.refusals: missing`},
		{"penalty: {refusals: 3, within: 1ns, for: 1m}\n", `p.yaml:3:32: penalty.within: 1ns is not a duration in [1µs, `},
	} {
		_, err := config.Parse("p.yaml", []byte(plans+c.penalty))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s", c.penalty, err, c.want)
			continue
		}
		if errs := config.Errors(err); len(errs) != 1 && !strings.HasPrefix(c.penalty, "penalty:\n") && c.penalty != "penalty: {}\n" {
			t.Errorf("%q: %d errors, want 1: %v", c.penalty, len(errs), err)
		}
	}
}
