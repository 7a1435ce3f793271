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

// A pattern's method is matched exactly, and clients send GET, never get:
// a standard method in lower (or mixed) case would make a cost, an
// exemption or a degradation class that matches nothing, and is refused at
// its line. A rule's methods match a request's in any case (httplimit),
// so one in lower case was refused as matching nothing, which it does
// not; it is refused as written otherwise than clients send it, since
// only a rule's GET matches HEAD too.
func TestMethodsInLowerCaseAreRefused(t *testing.T) {
	const plans = "plans:\n  free:\n    limits: [{name: m, algorithm: fixed-window, quantity: 10, window: 1m}]\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"a rule's method", "rules:\n  - {name: r, match: {methods: [POST, get]}, limits: [{name: a, algorithm: gcra, quantity: 1, window: 1s}]}\n",
			`m.yaml:5:39: rules[0].match.methods[1]: "get": write GET, as clients send it (a rule's GET matches HEAD too, its get does not)`},
		{"a cost's pattern", "    costs: {\"post /api/generate\": 5}\n",
			`m.yaml:4:13: plans.free.costs.post /api/generate: "post /api/generate" never matches: methods are case-sensitive, and clients send POST (POST /api/generate)`},
		{"an exempt route", "exempt: [\"Get /healthz\"]\n",
			`m.yaml:4:10: exempt[0]: "Get /healthz" never matches: methods are case-sensitive, and clients send GET (GET /healthz)`},
		{"an exempt route of the mapping", "exempt: {routes: [\"delete /x\"]}\n",
			`m.yaml:4:19: exempt.routes[0]: "delete /x" never matches`},
		{"a degradation class", "degradation: {classes: {expensive: [\"post /x\"]}}\n",
			`m.yaml:4:37: degradation.classes.expensive[0]: "post /x" never matches`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("m.yaml", []byte(plans+c.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want %s", err, c.want)
			}
		})
	}
	if _, err := config.Parse("m.yaml", []byte(plans+"    costs: {\"POST /a\": 2, \"/b\": 1}\nexempt: [\"GET /healthz\", \"/metrics\"]\n"+
		"rules:\n  - {name: r, match: {methods: [PURGE, GET]}, limits: [{name: a, algorithm: gcra, quantity: 1, window: 1s}]}\n")); err != nil {
		t.Errorf("upper-case and custom methods, patterns without one: %v", err)
	}
}

// A header net/http never leaves among a request's headers is refused
// wherever one is named, rather than read as absent on every request: Host
// is the request's host (match.hosts and the key host read it), and
// Transfer-Encoding how its body was framed.
func TestHeadersNetHTTPTakesOutAreRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
	const rule = "rules:\n  - name: r\n    limits: [{name: x, algorithm: gcra, quantity: 10, window: 1m}]\n"
	host := `"Host" is never among a request's headers: it is the request's host, which match.hosts and the key host read`
	te := `"Transfer-Encoding" is never among a request's headers: it is how the body was framed`
	for _, c := range []struct{ yaml, want string }{
		{"identity: {plan_header: host}\n", `h.yaml:3:25: identity.plan_header: ` + host},
		{"identity: {user_header: Host}\n", `h.yaml:3:25: identity.user_header: ` + host},
		{"identity: {api_key_headers: [X-Key, transfer-encoding]}\n", `h.yaml:3:37: identity.api_key_headers[1]: ` + te},
		{rule + "    match: {headers: [{name: Host, value: api.example.com}]}\n", `h.yaml:6:30: rules[0].match.headers[0].name: ` + host},
		{rule + "    key: [\"header:Host\"]\n    header_from: any\n", `h.yaml:6:11: rules[0].key[0]: ` + host},
	} {
		_, err := config.Parse("h.yaml", []byte(plans+c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n%v\nwant exactly:\n%s", c.yaml, err, c.want)
		}
	}
}
