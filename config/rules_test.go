package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

func TestRulesExampleLoads(t *testing.T) {
	c, err := config.Load("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := c.HTTPLimitOptions()
	if len(o.Rules) != 6 {
		t.Fatalf("%d rules, want 6", len(o.Rules))
	}
	if logins := o.Rules[5]; logins.Name != "logins" || len(logins.Key) != 1 || logins.Key[0] != "form:username" || len(logins.Limits) != 2 {
		t.Errorf("logins: %+v", logins)
	}
	if o.Penalty.Refusals != 20 || o.Penalty.Within != time.Minute || o.Penalty.For != 10*time.Minute {
		t.Errorf("penalty: %+v", o.Penalty)
	}
	up, search, reports, exports, completions := o.Rules[0], o.Rules[1], o.Rules[2], o.Rules[3], o.Rules[4]
	if completions.Cost == nil || *completions.Cost != 4096 || o.Count["completions"] != "header:X-Usage-Tokens" {
		t.Errorf("completions: %+v, count %q", completions, o.Count["completions"])
	}
	if len(exports.Plans) != 1 || exports.Plans[0] != "free" {
		t.Errorf("exports: plans %q, want [free]", exports.Plans)
	}
	if up.Name != "uploads" || len(up.Paths) != 2 || up.Key[0] != "path:tenant" || up.Limits[0].Quantity() != 10 || up.Cost != nil {
		t.Errorf("uploads: %+v", up)
	}
	if search.Key[0] != "header:X-Tenant" || search.HeaderFrom != "trusted_proxies" || search.Fallback != "ip" {
		t.Errorf("search: %+v", search)
	}
	if reports.Cost == nil || *reports.Cost != 1 || len(reports.Headers) != 1 || reports.Headers[0].Value != "application/json" || reports.Hosts[1] != "*.api.example.com" {
		t.Errorf("reports: %+v", reports)
	}
}

func TestRulesErrorsPointAtTheLine(t *testing.T) {
	const head = `plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]
rules:
`
	for _, c := range []struct{ name, rules, want string }{
		{"an unknown key attribute", `  - name: r
    key: [cookie]
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
`, `t.yaml:6:11: rules[0].key[0]: "cookie" is not a key attribute`},
		{"a path that is not a pattern", `  - name: r
    match: {paths: ["/a/{x"]}
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
`, `t.yaml:6:21: rules[0].match.paths[0]: "/a/{x": segment "{x": a wildcard is a whole segment, {name}`},
		{"an except path that is not a pattern", `  - name: r
    match: {paths: ["/a/"], except_paths: ["/a/b", "a/c"]}
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
`, `t.yaml:6:52: rules[0].match.except_paths[1]: "a/c": a path pattern starts with "/"`},
		{"a plan that is not one", `  - name: r
    match: {plans: [free, gold]}
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
`, `t.yaml:6:27: rules[0].match.plans[1]: "gold" is not a plan (free)`},
		{"a rule without limits", `  - name: r
    key: [ip]
`, `t.yaml:5:5: rules[0].limits: a rule needs at least one limit`},
		{"a header key without trusted proxies", `  - name: r
    key: ["header:X-Tenant"]
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
`, `t.yaml:6:11: rules[0].key[0]: "header:X-Tenant" is believed only from trusted proxies and none are configured`},
		{"an unknown field", `  - name: r
    matches: {}
    limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]
`, `t.yaml:6:5: rules[0].matches: unknown field`},
	} {
		_, err := config.Parse("t.yaml", []byte(head+c.rules))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}
