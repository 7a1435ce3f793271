package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
)

// TestGuideConfigurationsLoad: every YAML block of README.md and the guides
// that is a whole sluice configuration (it has a top-level plans:) loads as
// sluice check and sluice serve would load it. Fragments (a section to add
// to a configuration) are left to the tests of their features; quotas.md has
// a test of its own, and designer.md's blocks (requirements files of sluice
// design, and the configuration it writes) are cmd/sluice's.
func TestGuideConfigurationsLoad(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	block := regexp.MustCompile("(?ms)^```ya?ml\n(.*?)^```")
	n := 0
	for _, f := range files {
		if f == "decisions.md" || f == "architecture.md" || f == "designer.md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatchIndex(b, -1) {
			text := string(b[m[2]:m[3]])
			if !regexp.MustCompile(`(?m)^plans:`).MatchString(text) {
				continue
			}
			n++
			line := 1 + strings.Count(string(b[:m[2]]), "\n")
			if _, err := config.Parse(f, []byte(text)); err != nil {
				t.Errorf("%s: the configuration at line %d does not load:\n%v", f, line, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no configuration found in the guides")
	}
}
