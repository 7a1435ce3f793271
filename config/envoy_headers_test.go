package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// envoy.limit_header, remaining_header and reset_header rename the
// draft-6 headers, as envoyproxy/ratelimit's LIMIT_LIMIT_HEADER,
// LIMIT_REMAINING_HEADER and LIMIT_RESET_HEADER do, and reach
// envoy.Options; a name that is no HTTP token is refused at its line.
func TestEnvoyHeaderNames(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	c, err := config.Parse("t.yaml", []byte("envoy:\n  rules: r.yaml\n  headers: draft-6\n"+
		"  limit_header: X-RateLimit-Limit\n  remaining_header: X-RateLimit-Remaining\n  reset_header: X-RateLimit-Reset\n"+plans))
	if err != nil {
		t.Fatal(err)
	}
	o := c.EnvoyOptions()
	if o.LimitHeader != "X-RateLimit-Limit" || o.RemainingHeader != "X-RateLimit-Remaining" || o.ResetHeader != "X-RateLimit-Reset" {
		t.Errorf("envoy.Options names %q, %q, %q", o.LimitHeader, o.RemainingHeader, o.ResetHeader)
	}
	for _, c := range []struct{ yaml, want string }{
		{"envoy:\n  rules: r.yaml\n  headers: draft-6\n  remaining_header: \"X Left\"\n",
			`t.yaml:4:21: envoy.remaining_header: "X Left" is not a valid header name`},
		{"envoy:\n  rules: r.yaml\n  limit_header: X-RateLimit-Limit\n",
			`t.yaml:3:17: envoy.limit_header: renames a draft-6 header, but Headers is "ietf"`},
		{"envoy:\n  rules: r.yaml\n  headers: draft-6\n  reset_header: [a]\n",
			`t.yaml:4:17: envoy.reset_header: want a string`},
	} {
		_, err := config.Parse("t.yaml", []byte(c.yaml+plans))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %s", c.yaml, err, c.want)
		}
	}
}

// The loaded configuration names the draft-6 headers that will be sent:
// a name left out is its default, as Headers is "ietf" when left out, so
// that what reads the configuration (sluice check, /docs, the dashboard)
// shows them; with another mode no name is sent and none is set.
func TestEnvoyHeaderNamesLeftOutAreTheirDefaults(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	for _, c := range []struct {
		name, yaml              string
		limit, remaining, reset string
	}{
		{"draft-6, none renamed", "  headers: draft-6\n", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"},
		{"Draft-6, one renamed", "  headers: Draft-6\n  remaining_header: X-Left\n", "RateLimit-Limit", "X-Left", "RateLimit-Reset"},
		{"ietf", "  headers: ietf\n", "", "", ""},
		{"no headers field", "", "", "", ""},
		{"none", "  headers: none\n", "", "", ""},
	} {
		cfg, err := config.Parse("t.yaml", []byte("envoy:\n  rules: r.yaml\n"+c.yaml+plans))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		e := cfg.Envoy
		if e.LimitHeader != c.limit || e.RemainingHeader != c.remaining || e.ResetHeader != c.reset {
			t.Errorf("%s: names %q, %q, %q, want %q, %q, %q", c.name, e.LimitHeader, e.RemainingHeader, e.ResetHeader, c.limit, c.remaining, c.reset)
		}
		if o := cfg.EnvoyOptions(); o.Validate() != nil {
			t.Errorf("%s: the loaded names are refused: %v", c.name, o.Validate())
		}
	}
}
