package main

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// minimalConfig is a valid configuration without an admin section, to
// which a token's snippet is appended.
const minimalConfig = `plans:
  default:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 10, window: 1s}
default_plan: default
`

// The snippet sluice token prints loads as the caller it names, with the
// scopes asked for; scopes the configuration does not know, or none, are
// refused before a token is made.
func TestTokenSnippetLoads(t *testing.T) {
	for _, tc := range []struct {
		name, scopes string
		wantScopes   config.Scopes
	}{
		{"ops", "read,admin", config.ScopeRead | config.ScopeAdmin},
		{"billing batch", "check, override_plan", config.ScopeCheck | config.ScopeOverridePlan},
		{"x: y", "check", config.ScopeCheck},
		{"null", "read", config.ScopeRead},
		{"-", "read", config.ScopeRead},
		{"- x", "read", config.ScopeRead},
	} {
		code, out, errOut := runSluice(t, "token", "-name", tc.name, "-scopes", tc.scopes)
		if code != 0 {
			t.Fatalf("%q %q: exit %d: %s", tc.name, tc.scopes, code, errOut)
		}
		_, snippet, ok := strings.Cut(out, "\nadmin:\n")
		if !ok {
			t.Fatalf("no snippet in:\n%s", out)
		}
		cfg, err := config.Parse("token.yaml", []byte(minimalConfig+"admin:\n"+snippet))
		if err != nil {
			t.Errorf("%q %q: the snippet does not load: %v\n%s", tc.name, tc.scopes, err, snippet)
			continue
		}
		if c := cfg.Admin.Callers; len(c) != 1 || c[0].Name != tc.name || c[0].Scopes != tc.wantScopes {
			t.Errorf("%q %q: loaded callers %+v", tc.name, tc.scopes, c)
		}
	}
	for _, args := range [][]string{{"-scopes", "admn"}, {"-scopes", ""}, {"-scopes", " , "}, {"-name", ""}} {
		code, out, errOut := runSluice(t, append([]string{"token"}, args...)...)
		if code != 2 || out != "" || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 (a usage error), no token, a reason", args, code, out, errOut)
		}
	}
}
