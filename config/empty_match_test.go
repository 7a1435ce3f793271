package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// onePlan is a plans: section of one plan, free, of 100 a second.
const onePlan = "plans:\n  free:\n    limits: [{name: m, algorithm: gcra, quantity: 100, window: 1s}]\n"

// A rule's match: alternative of nothing ("-" alone, as a template renders
// an empty item, or {}) would match every request, widening a rule meant
// for some routes to all of them: it is refused at its line, as an empty
// entry of limits, keys or except is.
func TestAnEmptyMatchAlternativeIsRefused(t *testing.T) {
	for _, empty := range []string{"-", "- {}"} {
		y := onePlan + `rules:
  - name: orders
    match:
      - {paths: [/orders]}
      ` + empty + `
    limits: [{name: per-second, algorithm: gcra, quantity: 1, window: 1s}]
`
		c, err := config.Parse("m.yaml", []byte(y))
		if err == nil {
			t.Errorf("match: [{paths: [/orders]}, %s] loads; GET /other twice answers %v (the /orders rule limits every request), want an error at its line, 8",
				empty, codesOf(t, c, "http://api.example/other", 2))
			continue
		}
		if es := config.Errors(err); len(es) != 1 || es[0].Line != 8 || es[0].Path != "rules[0].match[1]" {
			t.Errorf("%s: %v, want one error of rules[0].match[1] at line 8", empty, err)
		}
	}
}

// A rule's match: with nothing under it (its lines commented out, or a
// template's empty value) is refused at match:, as match: [] is: read as
// match: left out, the rule meant for some routes would limit them all.
func TestAnEmptiedMatchIsRefused(t *testing.T) {
	for _, match := range []string{"    match:\n      # paths: [/orders]\n", "    match: {}\n"} {
		y := onePlan + "rules:\n  - name: orders\n" + match +
			"    limits: [{name: per-second, algorithm: gcra, quantity: 1, window: 1s}]\n"
		c, err := config.Parse("m.yaml", []byte(y))
		if err == nil {
			t.Errorf("%q loads; GET /other twice answers %v (the rule limits every request), want an error at match:",
				match, codesOf(t, c, "http://api.example/other", 2))
			continue
		}
		if es := config.Errors(err); len(es) != 1 || es[0].Path != "rules[0].match" {
			t.Errorf("%q: %v, want one error of rules[0].match", match, err)
		}
	}
}

// A rule's list of which any one must match, written empty (plans: []
// beside match: or in it, and match's methods, paths and hosts), is
// refused at its line: read as the list left out, it would apply the rule
// to every plan, method, path or host, the opposite of what a list of
// none says.
func TestARulesEmptyListIsRefused(t *testing.T) {
	for _, c := range []struct{ rule, path, url string }{
		{"    match: {paths: [/orders]}\n    plans: []\n", "rules[0].plans", "http://api.example/orders"},
		{"    match: {paths: [/orders], plans: []}\n", "rules[0].match.plans", "http://api.example/orders"},
		{"    match: {paths: []}\n", "rules[0].match.paths", "http://api.example/other"},
		{"    match: {methods: [], paths: [/orders]}\n", "rules[0].match.methods", "http://api.example/orders"},
		{"    match: {hosts: [], paths: [/orders]}\n", "rules[0].match.hosts", "http://api.example/orders"},
		{"    match: [{paths: []}]\n", "rules[0].match[0].paths", "http://api.example/other"},
	} {
		y := onePlan + "rules:\n  - name: orders\n" + c.rule +
			"    limits: [{name: per-second, algorithm: gcra, quantity: 1, window: 1s}]\n"
		cfg, err := config.Parse("m.yaml", []byte(y))
		if err == nil {
			t.Errorf("%q loads; GET %s twice answers %v, want %s refused", c.rule, c.url, codesOf(t, cfg, c.url, 2), c.path)
			continue
		}
		if es := config.Errors(err); len(es) != 1 || es[0].Path != c.path {
			t.Errorf("%q: %v, want one error at %s", c.rule, err, c.path)
		}
	}
}
