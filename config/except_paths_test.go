package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An except_paths pattern that none of its rule's paths can match leaves
// nothing out: it is refused at its line, naming the rule's paths.
func TestExceptPathsOutsideTheRulesPathsAreRefused(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]}\n"
	rule := func(paths, except string) string {
		return plans + "rules:\n  - name: r\n    match: {paths: " + paths + ", except_paths: " + except + "}\n" +
			"    limits: [{name: s, algorithm: fixed-window, quantity: 5, window: 1s}]\n"
	}
	_, err := config.Parse("e.yaml", []byte(rule(`["/v1/", "/v2/{id}"]`, `["/v1/status", "/v3/"]`)))
	want := `e.yaml:5:71: rules[0].match.except_paths[1]: "/v3/" leaves out nothing: none of the rule's paths (/v1/, /v2/{id}) matches a path it matches`
	if err == nil || err.Error() != want {
		t.Errorf("%v\nwant exactly:\n%s", err, want)
	}
	for _, c := range []struct{ paths, except string }{
		{`["/v1/"]`, `["/v1/{id}/status"]`},
		{`["/v1/{tenant}/uploads/"]`, `["/v1/acme/uploads/status"]`},
		{`["/a/b/{y}"]`, `["/a/{x}/c"]`},
		{`["/v1/{rest...}"]`, `["/v1/"]`},
		{`["/v1/Status"]`, `["/v1/status"]`},
		{`["/v1/"]`, `["/{x}/{$}"]`},
	} {
		if _, err := config.Parse("e.yaml", []byte(rule(c.paths, c.except))); err != nil {
			t.Errorf("paths %s, except_paths %s: %v", c.paths, c.except, err)
		}
	}
	for _, c := range []struct{ paths, except string }{
		{`["/v1/status"]`, `["/v1/health"]`},
		{`["/v1/{id}"]`, `["/v1/a/b"]`},
		{`["/v1/{$}"]`, `["/v1/a"]`},
	} {
		if _, err := config.Parse("e.yaml", []byte(rule(c.paths, c.except))); err == nil {
			t.Errorf("paths %s, except_paths %s: loaded", c.paths, c.except)
		}
	}
}
