package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// A rule without cost: charges its limits what the request costs, its
// plan's cost of the route: a limit of the rule that holds less than a
// cost of a route it matches could never admit those requests, and is
// refused at the rule's limits, naming the cost.
func TestRuleLimitsBelowACostOfTheirRoutesAreRefused(t *testing.T) {
	const plans = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]\n" +
		"    costs: {\"POST /v1/bulk/{id}\": 10}\n  pro:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]\n"
	rule := func(match, extra string) string {
		return plans + "rules:\n  - name: bulk\n    match: " + match + "\n" + extra +
			"    limits:\n      - {name: per-second, algorithm: fixed-window, quantity: 5, window: 1s}\n"
	}
	_, err := config.Parse("r.yaml", []byte(rule("{paths: [\"/v1/\"]}", "")))
	want := `r.yaml:11:7: rules[0].limits: limit per-second holds 5, less than the 10 that "POST /v1/bulk/{id}" costs on plan free ` +
		`(plans.free.costs, line 4), which the rule charges as it sets no cost: such requests could never be admitted (give the rule a cost:, or the limit a burst of at least 10)`
	if err == nil || err.Error() != want {
		t.Errorf("a rule of every path below /v1/:\n%v\nwant exactly:\n%s", err, want)
	}
	for _, c := range []struct{ name, yaml string }{
		{"a cost of its own", rule("{paths: [\"/v1/\"]}", "    cost: 1\n")},
		{"another path", rule("{paths: [\"/v2/\"]}", "")},
		{"a path left out", rule("{paths: [\"/v1/\"], except_paths: [\"/v1/bulk/\"]}", "")},
		{"another method", rule("{methods: [GET], paths: [\"/v1/\"]}", "")},
		{"another plan", rule("{plans: [pro]}", "")},
	} {
		if _, err := config.Parse("r.yaml", []byte(c.yaml)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	for _, c := range []struct{ name, yaml string }{
		{"every path", rule("{methods: [POST]}", "")},
		{"a host, the cost being of every host", rule("{hosts: [api.example.com]}", "")},
		{"the route itself", rule("{paths: [\"/v1/bulk/{x}\"], hosts: [\"*.example.com\"], headers: [{name: X-Beta, value: \"1\"}]}", "")},
	} {
		if _, err := config.Parse("r.yaml", []byte(c.yaml)); err == nil {
			t.Errorf("%s: loaded", c.name)
		}
	}
}

// Each rule is judged: a second rule whose limit holds less than a cost is
// refused beside the first.
func TestEveryRuleBelowACostIsRefused(t *testing.T) {
	const yaml = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]\n" +
		"    costs: {\"POST /bulk\": 10}\n" +
		"rules:\n  - name: a\n    limits: [{name: s, algorithm: fixed-window, quantity: 5, window: 1s}]\n" +
		"  - name: b\n    limits: [{name: s, algorithm: fixed-window, quantity: 5, window: 1s}]\n"
	_, err := config.Parse("r.yaml", []byte(yaml))
	if errs := config.Errors(err); len(errs) != 2 || errs[0].Line != 7 || errs[1].Line != 9 {
		t.Errorf("%v\nwant an error at line 7 and one at line 9", err)
	}
}
