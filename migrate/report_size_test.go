package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// The report's table names a rule's alternatives and what it leaves out
// by their first few, and counts the rest: a rule that leaves out 4,000
// patterns (a catch-all plugin over 2,000 routes) is a line of a few
// hundred characters, not one that lists them all (the configuration
// does).
func TestReportNamesAFewOfARulesPatterns(t *testing.T) {
	const n = 2000
	tr, err := migrate.Import("kong", kongCatchAllOver(n), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	longest := ""
	for _, line := range strings.Split(tr.Report(), "\n") {
		if len(line) > len(longest) {
			longest = line
		}
	}
	if len(longest) > 1000 {
		t.Errorf("the report's longest line is %d characters, want at most 1,000: %.300s…", len(longest), longest)
	}
	if !strings.Contains(tr.Report(), fmt.Sprintf("and %d more", 2*n-5)) {
		t.Errorf("want the rule's left-out patterns counted (and %d more): %.2000s", 2*n-5, tr.Report())
	}
}
