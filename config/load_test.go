package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
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
		{"zero quantity", base("      - name: per-minute\n        algorithm: gcra\n        quantity: 0\n        window: 1m\n"),
			`bad.yaml:6:19: plans.free.limits[0].quantity: 0 is out of range [1, 1099511627776]`},
		{"negative quantity", base("      - name: per-minute\n        algorithm: gcra\n        quantity: -5\n        window: 1m\n"),
			`bad.yaml:6:19: plans.free.limits[0].quantity: -5 is out of range`},
		{"unknown algorithm", base("      - name: per-minute\n        algorithm: magic\n        quantity: 10\n        window: 1m\n"),
			`bad.yaml:5:20: plans.free.limits[0].algorithm: unknown algorithm "magic"`},
		{"duplicate limit name", base(okLimit + okLimit), `bad.yaml:8:15: plans.free.limits[1].name: "per-minute" is already a limit of this list`},
		{"duplicate key", "plans:\n  free:\n    limits: []\n  free:\n    limits: []\n", `bad.yaml:4:3: plans.free: set twice`},
		{"burst on a window algorithm", base("      - name: per-minute\n        algorithm: fixed-window\n        quantity: 10\n        window: 1m\n        burst: 5\n"),
			`bad.yaml:8:16: plans.free.limits[0].burst: applies only to token-bucket, leaky-bucket and gcra`},
		{"missing field", base("      - name: per-minute\n        algorithm: gcra\n        window: 1m\n"), `bad.yaml:4:9: plans.free.limits[0].quantity: missing`},
		{"unknown plan reference", base(okLimit) + "default_plan: gold\n", `bad.yaml:8:15: default_plan: "gold" is not a plan`},
		{"upgrade to unknown plan", base(okLimit) + "    upgrade: {plan: platinum}\n", `bad.yaml:8:14: plans.free.upgrade.plan: "platinum" is not a plan`},
		{"bad pattern", base(okLimit) + "    costs: {\"FETCH\": 3}\n", `bad.yaml:8:13: plans.free.costs.FETCH: "FETCH" is not a ServeMux pattern`},
		{"bad key hash", base(okLimit) + "keys:\n  - sha256: abc\n    plan: free\n", `bad.yaml:9:13: keys[0].sha256: want the 64 hex digits`},
		{"bad proxy", "identity:\n  trusted_proxies: [10.0.0.0/33]\n" + base(okLimit), `bad.yaml:2:21: identity.trusted_proxies[0]: "10.0.0.0/33" is not an IP address or CIDR prefix`},
		{"YAML syntax", "plans:\n  free: [\n", `bad.yaml:2:1: YAML syntax: did not find expected node content`},
		{"no plans", "listen: \":9\"\n", `bad.yaml:1:1: plans: at least one plan is needed`},
		{"cost above a burst", base(okLimit) + "    costs: {\"POST /x\": 11}\n", `bad.yaml:8:13: plans.free.costs.POST /x: costs 11, more than limit per-minute can ever hold (10)`},
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
