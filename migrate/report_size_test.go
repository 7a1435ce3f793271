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
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nroutes:\n- {name: w, paths: [/], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}\n")
	for i := range n {
		fmt.Fprintf(&b, "- {name: r%d, paths: [/a%d]}\n", i, i)
	}
	tr, err := migrate.Import("kong", b.String(), "kong.yaml")
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
