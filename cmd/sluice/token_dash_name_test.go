package main

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// TestTokenSnippetOfANameStartingWithADashLoadsThatName: sluice token
// prints the admin.callers entry that holds the token's hash; a name YAML
// would not read as it is — one starting with "-" among them, holding a
// quote or a backslash (a caller's name may hold any but control
// characters) — is quoted with its quotes and backslashes escaped, so
// that the snippet loads as a caller of that very name.
func TestTokenSnippetOfANameStartingWithADashLoadsThatName(t *testing.T) {
	for _, name := range []string{`-ops"eu`, `-C:\ops`, `-"`, `-\"`, `-ops`, `null"`} {
		code, out, errOut := runSluice(t, "token", "-name", name, "-scopes", "read")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", name, code, errOut)
		}
		_, snippet, ok := strings.Cut(out, "\nadmin:\n")
		if !ok {
			t.Fatalf("no snippet in:\n%s", out)
		}
		cfg, err := config.Parse("token.yaml", []byte(minimalConfig+"admin:\n"+snippet))
		if err != nil {
			t.Errorf("%q: the snippet sluice token printed does not load: %v\n%s", name, err, snippet)
			continue
		}
		if c := cfg.Admin.Callers; len(c) != 1 || c[0].Name != name {
			t.Errorf("%q: the snippet loads callers %+v", name, c)
		}
	}
}
