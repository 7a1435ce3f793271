package migrate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/migrate"
)

// The shadow import (without -enforce) writes every imported rule in
// shadow mode, at any depth the import accepts: descriptors nested 16
// deep and 33 deep (the deepest, maxEnvoyDepth lists below the domain's).
func TestEnvoyShadowImportShadowsRulesAtEveryDepth(t *testing.T) {
	for _, depth := range []int{16, 33} {
		var b strings.Builder
		b.WriteString("domain: d\ndescriptors:\n")
		ind := ""
		for i := 0; i < depth; i++ {
			b.WriteString(ind + "  - key: k" + string(rune('A'+i)) + "\n")
			if i == depth-1 {
				b.WriteString(ind + "    rate_limit: {unit: minute, requests_per_unit: 1}\n")
			} else {
				b.WriteString(ind + "    descriptors:\n")
			}
			ind += "    "
		}
		tr, err := migrate.Import("envoy", b.String(), "config.yaml")
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		files, err := tr.Files(false)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), migrate.EnvoyRulesFile)
		if err := os.WriteFile(p, []byte(files[migrate.EnvoyRulesFile]), 0o644); err != nil {
			t.Fatal(err)
		}
		rules, err := envoy.LoadRuleFiles(p)
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		ls := rules.Limits()
		if len(ls) != 1 {
			t.Fatalf("depth %d: want 1 limit, got %d", depth, len(ls))
		}
		if !ls[0].Shadow() {
			t.Errorf("the shadow import of a rule nested %d deep enforces it: its rules file lacks shadow_mode there", depth)
		}
	}
}
