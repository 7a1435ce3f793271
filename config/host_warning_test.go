package config_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A reverse proxy that sends its upstream the upstream URL's host while a
// rule, an exception, an exempt route, a degradation class or an endpoint
// cost matches the request's Host, or a rule is keyed by it, is warned of,
// naming the place: the client picks that Host, which the upstream never
// sees. It picks the class it is shed by (a health class
// "status.example.com/" is never shed; a critical "POST
// api.example.com/orders" lets any write through at level 2), and under a
// "host" key each Host it makes up is a fresh count. With preserve_host,
// without an upstream (forward-auth, the decision API: the front proxy
// reports the host it routed by) or without a host in any match, nothing
// is said.
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
		{"a rule keyed by host", proxy + plans + "rules: [{name: per-site, match: {paths: [/api/]}, key: [host], limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]}]\n", `rule "per-site"'s host key`},
		{"a health class's host", proxy + plans + "degradation: {classes: {health: [\"status.example.com/\"]}}\n", `degradation class health "status.example.com/"`},
		{"a critical class's host", proxy + plans + "degradation: {classes: {critical: [\"POST api.example.com/orders\"]}}\n", `degradation class critical "POST api.example.com/orders"`},
		{"an expensive class's host", proxy + plans + "degradation: {classes: {expensive: [\"reports.example.com/\"]}}\n", `degradation class expensive "reports.example.com/"`},
		{"a cost's host", proxy + "plans:\n  free:\n    limits: [{name: per-minute, algorithm: gcra, quantity: 10, window: 1m}]\n    costs: {\"POST uploads.example.com/v1/files\": 5}\n", `plan "free"'s cost of "POST uploads.example.com/v1/files"`},
		{"preserve_host", proxy + "preserve_host: true\n" + plans + rule("{hosts: [beta.example.com]}"), ""},
		{"no upstream", plans + rule("{hosts: [beta.example.com]}") + "exempt: [\"status.example.com/\"]\n", ""},
		{"by path", proxy + plans + rule("{paths: [/beta/]}") + "exempt: [\"GET /healthz\"]\n" + "degradation: {classes: {health: [\"GET /healthz\"]}}\n", ""},
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
