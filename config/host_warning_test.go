package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A reverse proxy that sends its upstream the upstream URL's host while a
// rule, an exception, an exempt route or an endpoint cost matches the
// request's Host is warned of, naming the place: the client picks that
// Host, which the upstream never sees. With preserve_host, without an
// upstream (forward-auth, the decision API: the front proxy reports the
// host it routed by) or without a host in any match, nothing is said.
func TestHostWarningNamesAHostMatchTheUpstreamNeverSees(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	const proxy = "upstream: http://app.internal:8080\n"
	rule := func(match string) string {
		return "rules: [{name: beta, match: " + match + ", limits: [{name: m, algorithm: gcra, quantity: 1, window: 1m}]}]\n"
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a rule's hosts", proxy + plans + rule("{hosts: [beta.example.com]}"), `rule "beta" matches requests by the Host they name`},
		{"an alternative's hosts", proxy + plans + rule("[{paths: [/a]}, {hosts: [b.example]}]"), `rule "beta"`},
		{"an exception's hosts", proxy + plans + "rules: [{name: beta, match: {paths: [/api/]}, except: [{hosts: [internal.example]}], limits: [{name: m, algorithm: gcra, quantity: 1, window: 1m}]}]\n", `rule "beta"'s except`},
		{"an exempt route's host", proxy + plans + "exempt: [\"status.example.com/\"]\n", `exempt route "status.example.com/"`},
		{"a cost's host", proxy + "plans:\n  free:\n    limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]\n    costs: {\"POST uploads.example.com/v1/files\": 5}\n", `plan "free"'s cost of "POST uploads.example.com/v1/files"`},
		{"preserve_host", proxy + "preserve_host: true\n" + plans + rule("{hosts: [beta.example.com]}"), ""},
		{"no upstream", plans + rule("{hosts: [beta.example.com]}") + "exempt: [\"status.example.com/\"]\n", ""},
		{"by path", proxy + plans + rule("{paths: [/beta/]}") + "exempt: [\"GET /healthz\"]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse("sluice.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.HostWarning()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("HostWarning() = %q, want %q", got, tc.want)
			}
		})
	}
}
