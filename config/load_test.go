package config_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

func TestExampleConfigLoads(t *testing.T) {
	c, err := config.Load("../examples/sluice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Policy.Plans); got != 4 {
		t.Fatalf("%d plans, want 4", got)
	}
	free := c.Policy.Plan("free")
	if free == nil || len(free.Limits) != 3 || free.Costs["POST /api/generate"] != 10 || free.Upgrade.Plan != "pro" {
		t.Fatalf("free plan: %+v", free)
	}
	if l := free.Limits[0]; l.Name() != "per-second" || l.Algorithm() != sluice.AlgorithmTokenBucket || l.Burst() != 10 || l.Window() != time.Second {
		t.Errorf("free per-second: %v", l)
	}
	if c.Policy.Plan("enterprise").Upgrade != nil {
		t.Error("the top plan has an upgrade")
	}
	if len(c.Keys) != 3 {
		t.Fatalf("%d keys", len(c.Keys))
	}
	for _, k := range c.Keys {
		if k.Name == "demo-enterprise" && k.Plan.Limits[0].Quantity() != 500 {
			t.Errorf("per-key override not applied: %v", k.Plan.Limits[0])
		}
	}
	if c.Identity.UnknownKeys != "ip" || c.Identity.IPv6Prefix != 64 || len(c.Identity.TrustedProxies) != 2 {
		t.Errorf("identity %+v", c.Identity)
	}
}

// Every configuration in examples/ loads, those added later included: a
// test of each by name (TestExampleConfigLoads, TestRulesExampleLoads)
// would leave a new one unread.
func TestEveryExampleConfigurationLoads(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v, want sluice.yaml and rules.yaml at least", files, err)
	}
	for _, f := range files {
		if _, err := config.Load(f); err != nil {
			t.Errorf("%s does not load:\n%v", f, err)
		}
	}
}

// One test per error class: each message names file:line:col and the path.
func TestConfigErrorsNameTheirPlace(t *testing.T) {
	base := func(limit string) string {
		return "plans:\n  free:\n    limits:\n" + limit
	}
	okLimit := "      - name: per-minute\n        algorithm: gcra\n        quantity: 10\n        window: 1m\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown top-level field", "plns: {}\n", `bad.yaml:1:1: plns: unknown field`},
		{"unknown limit field", base(okLimit + "        colour: red\n"), `bad.yaml:8:9: plans.free.limits[0].colour: unknown field`},
		{"wrong type", base("      - name: per-minute\n        algorithm: gcra\n        quantity: lots\n        window: 1m\n"),
			`bad.yaml:6:19: plans.free.limits[0].quantity: "lots" is not an integer`},
		{"bad duration", base("      - name: per-minute\n        algorithm: gcra\n        quantity: 10\n        window: 1 fortnight\n"),
			`bad.yaml:7:17: plans.free.limits[0].window: "1 fortnight" is not a duration (use e.g. 30s, 1m, 24h, 7d)`},
		{"duration past time.Duration", base(okLimit) + "penalty: {refusals: 3, within: 1m, for: 250000d}\n",
			`bad.yaml:8:41: penalty.for: "250000d" is too long (at most 106751d)`},
		{"window below a microsecond", base("      - name: per-minute\n        algorithm: gcra\n        quantity: 10\n        window: 500ns\n"),
			`bad.yaml:7:17: plans.free.limits[0].window: 500ns is not a whole number of microseconds (the least is 1µs)`},
		{"window longer than a limit holds", base("      - name: per-minute\n        algorithm: gcra\n        quantity: 10\n        window: 500d\n"),
			`bad.yaml:7:17: plans.free.limits[0].window: 12000h0m0s is longer than a limit holds (at most 9773h26m12.088832s, about 407 days)`},
		{"max_wait past a microsecond", base("      - name: q\n        algorithm: leaky-bucket\n        quantity: 10\n        window: 1s\n        max_wait: 1500ns\n"),
			`bad.yaml:8:19: plans.free.limits[0].max_wait: 1.5µs is not a whole number of microseconds`},
		{"zero quantity", base("      - name: per-minute\n        algorithm: gcra\n        quantity: 0\n        window: 1m\n"),
			`bad.yaml:6:19: plans.free.limits[0].quantity: 0 is out of range [1, 1099511627776]`},
		{"negative quantity", base("      - name: per-minute\n        algorithm: gcra\n        quantity: -5\n        window: 1m\n"),
			`bad.yaml:6:19: plans.free.limits[0].quantity: -5 is out of range`},
		{"quantity past int64", base("      - name: per-minute\n        algorithm: gcra\n        quantity: 99999999999999999999\n        window: 1m\n"),
			`bad.yaml:6:19: plans.free.limits[0].quantity: 99999999999999999999 is out of range [1, 1099511627776]`},
		{"unknown algorithm", base("      - name: per-minute\n        algorithm: magic\n        quantity: 10\n        window: 1m\n"),
			`bad.yaml:5:20: plans.free.limits[0].algorithm: unknown algorithm "magic"`},
		{"duplicate limit name", base(okLimit + okLimit), `bad.yaml:8:15: plans.free.limits[1].name: "per-minute" is already a limit of this list`},
		{"duplicate key", "plans:\n  free:\n    limits: []\n  free:\n    limits: []\n", `bad.yaml:4:3: plans.free: set twice`},
		{"burst on a window algorithm", base("      - name: per-minute\n        algorithm: fixed-window\n        quantity: 10\n        window: 1m\n        burst: 5\n"),
			`bad.yaml:8:16: plans.free.limits[0].burst: applies only to token-bucket, leaky-bucket and gcra`},
		{"missing field", base("      - name: per-minute\n        algorithm: gcra\n        window: 1m\n"), `bad.yaml:4:9: plans.free.limits[0].quantity: missing`},
		{"unknown plan reference", base(okLimit) + "default_plan: gold\n", `bad.yaml:8:15: default_plan: "gold" is not a plan`},
		{"upgrade to unknown plan", base(okLimit) + "    upgrade: {plan: platinum}\n", `bad.yaml:8:14: plans.free.upgrade.plan: "platinum" is not a plan`},
		{"upgrade to the plan itself", base(okLimit) + "    upgrade: {plan: free}\n",
			`bad.yaml:8:21: plans.free.upgrade.plan: "free" is this plan: a client refused on it would be told to upgrade to the plan it has`},
		{"bad pattern", base(okLimit) + "    costs: {\"FETCH\": 3}\n", `bad.yaml:8:13: plans.free.costs.FETCH: "FETCH" is not a ServeMux pattern`},
		{"bad key hash", base(okLimit) + "keys:\n  - sha256: abc\n    plan: free\n", `bad.yaml:9:13: keys[0].sha256: want the 64 hex digits`},
		{"bad proxy", "identity:\n  trusted_proxies: [10.0.0.0/33]\n" + base(okLimit), `bad.yaml:2:21: identity.trusted_proxies[0]: "10.0.0.0/33" is not an IP address or CIDR prefix`},
		{"YAML syntax", "plans:\n  free: [\n", `bad.yaml:2:1: YAML syntax: did not find expected node content`},
		{"no plans", "listen: \":9\"\n", `bad.yaml:1:1: plans: at least one plan is needed`},
		{"cost above a burst", base(okLimit) + "    costs: {\"POST /x\": 11}\n", `bad.yaml:8:13: plans.free.costs.POST /x: costs 11, more than limit per-minute can ever hold (10)`},
		{"unknown header mode", base(okLimit) + "response: {headers: [ietf, draft-8]}\n",
			`bad.yaml:8:21: response.headers: "draft-8" is not a header mode (ietf, draft-7, draft-6, legacy)`},
		{"prefix out of range", "identity: {ipv6_prefix: 129}\n" + base(okLimit), `bad.yaml:1:25: identity.ipv6_prefix: 129 is out of range [1, 128]`},
		{"prefix zero, which would read as the default", "identity: {ipv4_prefix: 0}\n" + base(okLimit),
			`bad.yaml:1:25: identity.ipv4_prefix: 0 is out of range [1, 32]`},
		{"port out of range", base(okLimit) + "listen: \":80800\"\n", `bad.yaml:8:9: listen: ":80800" is not a host:port address`},
		{"port out of range on the admin listener", base(okLimit) + "admin: {listen: \"127.0.0.1:-1\"}\n",
			`bad.yaml:8:17: admin.listen: "127.0.0.1:-1" is not a host:port address`},
		{"upstream port out of range", base(okLimit) + "upstream: \"http://api.internal:80800\"\n",
			`bad.yaml:8:11: upstream: "http://api.internal:80800": port 80800 is not from 1 to 65535`},
		{"body and template both", base(okLimit) + "response:\n  body: error-code\n  template: '{\"error\": \"{{detail}}\"}'\n",
			`bad.yaml:10:13: response.template: the refusal's body is already set on line 9: set body or template, not both`},
		{"bad header name", "identity:\n  api_key_headers: [X-Key, \"X Key\"]\n" + base(okLimit),
			`bad.yaml:2:28: identity.api_key_headers[1]: "X Key" is not a valid header name`},
		{"unknown forwarded header", "identity: {forwarded_header: x-real-ip}\n" + base(okLimit),
			`bad.yaml:1:30: identity.forwarded_header: "x-real-ip" is not one of x-forwarded-for, forwarded`},
		{"bad plan name", "plans:\n  a b:\n    limits:\n" + okLimit, `bad.yaml:2:3: plans.a b: plan name "a b" must be 1-64 characters`},
		{"plan without limits", "plans:\n  free:\n    limits: []\n", `bad.yaml:2:3: plans.free.limits: a plan needs at least one limit`},
		{"conflicting exempt patterns", base(okLimit) + "exempt: [\"GET /a/{x}\", \"GET /{y}/b\"]\n",
			`bad.yaml:8:24: exempt[1]: "GET /{y}/b" conflicts with "GET /a/{x}"`},
		{"unknown envoy header mode", base(okLimit) + "envoy: {rules: [r.yaml], headers: draft-7}\n",
			`bad.yaml:8:35: envoy.headers: "draft-7" is not one of ietf, draft-6, none`},
		{"inexact bucket", base("      - name: odd\n        algorithm: gcra\n        quantity: 999983\n        window: 24h\n"),
			`bad.yaml:4:9: plans.free.limits[0]: invalid limit: odd: 999983 per 24h0m0s with burst 999983 cannot be kept exact`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("bad.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
			if len(config.Errors(err)) == 0 {
				t.Errorf("no *config.Error in %v", err)
			}
		})
	}
}

// Values that httplimit and envoy accept in any case are accepted so in
// the file, and loaded in lower case with the defaults filled in.
func TestModesInAnyCase(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
identity: {forwarded_header: Forwarded, unknown_keys: IP}
plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}
response: {headers: [IETF, Legacy]}
envoy: {rules: [r.yaml], headers: Draft-6}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Response.Headers, " "); got != "ietf legacy" {
		t.Errorf("headers %q", got)
	}
	if c.Identity.ForwardedHeader != "forwarded" || c.Identity.UnknownKeys != "ip" || c.Envoy.Headers != "draft-6" {
		t.Errorf("identity %+v, envoy %+v", c.Identity, c.Envoy)
	}
	if c.Identity.IPv4Prefix != 32 || c.Identity.IPv6Prefix != 64 || strings.Join(c.Identity.APIKeyHeaders, " ") != "Authorization X-Api-Key" {
		t.Errorf("defaults not filled in: %+v", c.Identity)
	}
}

// A Config built in Go, with nothing but a policy, gives the middleware
// options it accepts, which take httplimit's defaults.
func TestHTTPLimitOptionsOfAConfigBuiltInGo(t *testing.T) {
	c := &config.Config{Policy: &httplimit.Policy{Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1)}}}}}
	o := c.HTTPLimitOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	d := o.WithDefaults()
	if d.DefaultPlan != "free" || d.IPv4Prefix != 32 || len(d.APIKeyHeaders) != 2 || d.Headers[0] != "ietf" {
		t.Errorf("defaults %+v", d)
	}
	if err := c.EnvoyOptions().Validate(); err != nil {
		t.Error(err)
	}
}

// A configuration is one YAML document: settings after a second "---" are
// refused at their line, never left unread.
func TestASecondDocumentIsRefused(t *testing.T) {
	_, err := config.Parse("two.yaml", []byte("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n---\nglobal:\n  - {name: g, algorithm: gcra, quantity: 1000, window: 1s}\n"))
	if err == nil || !strings.Contains(err.Error(), "two.yaml:4:1: a second YAML document") {
		t.Fatalf("error %v, want two.yaml:4:1: a second YAML document", err)
	}
	if _, err := config.Parse("end.yaml", []byte("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n---\n")); err != nil {
		t.Errorf("a trailing ---: %v", err)
	}
}

// True and FALSE are booleans of YAML 1.2, as true and false are.
func TestBooleansInAnyCaseOfYAML12(t *testing.T) {
	c, err := config.Parse("t.yaml", []byte(`
preserve_host: True
plans:
  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m, shadow: TRUE}]}
upstream: https://api.internal
upstream_tls: FALSE
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.PreserveHost || !c.Policy.Plan("free").Limits[0].Shadow() || c.UpstreamTLS.Enabled {
		t.Errorf("preserve_host %v, shadow %v, upstream_tls %v; want true, true, false",
			c.PreserveHost, c.Policy.Plan("free").Limits[0].Shadow(), c.UpstreamTLS.Enabled)
	}
}

// A tab that indents a line, as an editor may insert, is refused at the tab
// with the reason.
func TestATabIsLocated(t *testing.T) {
	_, err := config.Parse("tab.yaml", []byte("plans:\n  free:\n\tlimits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "tab.yaml:3:1: YAML syntax: ") || !strings.HasSuffix(err.Error(), "(a tab: indent YAML with spaces)") {
		t.Errorf("error %v, want tab.yaml:3:1: YAML syntax: … (a tab: indent YAML with spaces)", err)
	}
}

// Errors come in file order, whichever check found them: a plan name that
// is judged once every plan is read comes before a quantity further down.
func TestErrorsInFileOrder(t *testing.T) {
	_, err := config.Parse("o.yaml", []byte("default_plan: gold\nplans:\n"+
		"  free: {limits: [{name: m, algorithm: gcra, quantity: 0, window: 1m}]}\n"+
		"  pro: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"+
		"response: {deny_status: 200}\n"))
	var at []string
	for _, e := range config.Errors(err) {
		at = append(at, fmt.Sprintf("%d:%d", e.Line, e.Col))
	}
	if got := strings.Join(at, " "); got != "1:15 3:56 5:25" {
		t.Errorf("errors at %s, want 1:15 3:56 5:25:\n%v", got, err)
	}
	if !strings.HasPrefix(err.Error(), "o.yaml:1:15: default_plan:") {
		t.Errorf("the joined error starts %q, want the first line's", strings.SplitN(err.Error(), "\n", 2)[0])
	}
}
