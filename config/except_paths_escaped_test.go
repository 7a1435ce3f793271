package config_test

import (
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// An except_paths pattern spelled without escapes under a rule's path
// spelled with them (or the other way round) leaves requests out: ServeMux
// unescapes a pattern's literal segments, so "/%7Eadmin/" and
// "/~admin/stats" both match GET /~admin/stats. It loads (it was refused
// as one that "leaves out nothing").
func TestAnExceptPathSpelledWithoutTheRulesEscapesLoads(t *testing.T) {
	const plans = "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 100, window: 1m}]}\n"
	rule := func(paths, except string) string {
		return plans + "rules:\n  - name: r\n    match: {paths: " + paths + ", except_paths: " + except + "}\n" +
			"    limits: [{name: s, algorithm: fixed-window, quantity: 5, window: 1s}]\n"
	}
	for _, c := range []struct{ paths, except string }{
		{`["/%7Eadmin/"]`, `["/~admin/stats"]`},
		{`["/api/caf%C3%A9/"]`, `["/api/café/internal"]`},
	} {
		if _, err := config.Parse("e.yaml", []byte(rule(c.paths, c.except))); err != nil {
			t.Errorf("paths %s, except_paths %s: %v", c.paths, c.except, err)
		}
	}
}
