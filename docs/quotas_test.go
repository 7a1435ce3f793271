package docs_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

// TestQuotasGuideLoads: every YAML block of quotas.md loads (one without
// plans with the first block's), and the first block's monthly quotas are
// calendar months.
func TestQuotasGuideLoads(t *testing.T) {
	b, err := os.ReadFile("quotas.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	if len(blocks) < 3 {
		t.Fatalf("%d YAML blocks", len(blocks))
	}
	first := blocks[0][1]
	for i, m := range blocks {
		text := m[1]
		if !strings.Contains(text, "plans:") {
			text += first
		}
		c, err := config.Parse("quotas.md", []byte(text))
		if err != nil {
			t.Fatalf("block %d: %v", i+1, err)
		}
		if i == 0 {
			for _, p := range c.Policy.Plans {
				if l := p.Limits[1]; l.Period() != sluice.Month || l.Name() != "per-month" {
					t.Errorf("plan %s: %v is not a calendar month", p.Name, l)
				}
			}
		}
	}
}
