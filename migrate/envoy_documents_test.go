package migrate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// A rules file of two YAML documents: envoyproxy/ratelimit reads the first
// and ignores the second without a word (docs/envoy.md, "Several documents
// in one file"); sluice's service reads both. The import keeps the first
// document alone, in the shadow and the enforced configuration alike, so
// sluice limits domain a only, as envoyproxy/ratelimit did, and the report
// names domain b as not imported.
func TestImportEnvoyRulesKeepsTheFirstDocumentOnly(t *testing.T) {
	src := `domain: a
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 1}
---
domain: b
descriptors:
  - key: k
    rate_limit: {unit: minute, requests_per_unit: 1}
`
	tr, err := migrate.Import("envoy", src, "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	domains := func(enforce bool) []string {
		files, err := tr.Files(enforce)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		p := filepath.Join(dir, migrate.EnvoyRulesFile)
		if err := os.WriteFile(p, []byte(files[migrate.EnvoyRulesFile]), 0o644); err != nil {
			t.Fatal(err)
		}
		rules, err := envoy.LoadRuleFiles(p)
		if err != nil {
			t.Fatal(err)
		}
		return rules.Domains()
	}
	shadow, enforced := domains(false), domains(true)
	if !slices.Equal(shadow, enforced) {
		t.Errorf("the shadow import loads domains %v, the enforced one %v", shadow, enforced)
	}
	if slices.Contains(enforced, "b") {
		t.Errorf("the enforced import limits domain b, which envoyproxy/ratelimit ignores (it reads a file's first document)")
	}
	if got := differsLines(tr, "domain b (line 6)"); len(got) != 1 || !strings.Contains(got[0], "not imported") {
		t.Errorf("the report does not name domain b as not imported: %q", got)
	}
}
