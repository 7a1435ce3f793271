package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A plugin on a catch-all route (/) over 2,000 routes without a
// rate-limiting plugin (/a0 to /a1999) leaves each out of its rule, and
// the report says so in a line for all of them, counting them and naming
// the first five: each kind of thing said of the routes a rule leaves out
// is one line however many they are, so the report of a file of any size
// stays under 100 lines (the kinds, seven, for each of its few rules, and
// the file's own settings).
func TestImportKongReportOfManyRoutesIsBounded(t *testing.T) {
	const n = 2000
	tr, err := migrate.Import("kong", kongCatchAllOver(n), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.SluiceRules) != 1 || len(tr.SluiceRules[0].ExceptPaths) != 2*n {
		t.Fatalf("want rule w leaving out the %d routes' %d patterns: %d rules", n, 2*n, len(tr.SluiceRules))
	}
	if lines := strings.Count(tr.Report(), "\n"); lines >= 100 {
		t.Errorf("the report of %d routes is %d lines, want under 100", n, lines)
	}
	leftOut, prefixes := 0, 0
	for _, d := range tr.Differences {
		if !strings.Contains(d.Text, fmt.Sprintf("%d routes", n)) {
			continue
		}
		if !strings.Contains(d.Text, "r0 (/a0") || !strings.Contains(d.Text, "r4 (/a4") || strings.Contains(d.Text, "r5 (") || !strings.Contains(d.Text, fmt.Sprintf("and %d more", n-5)) {
			t.Errorf("want the first five routes named and %d more: %q", n-5, d.Text)
		}
		switch {
		case d.Same && strings.Contains(d.Text, "the rule leaves them out (except_paths)"):
			leftOut++
		case !d.Same && strings.Contains(d.Text, "string prefix"):
			prefixes++
		}
	}
	if leftOut != 1 || prefixes != 1 {
		t.Errorf("want one line of the %d routes left out and one of their string prefixes, have %d and %d", n, leftOut, prefixes)
	}
}

// kongCatchAllOver is a decK file of a route of / with a plugin (3 a
// minute by address) and n routes without one, r0 … r<n-1> on /a0 ….
func kongCatchAllOver(n int) string {
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nroutes:\n- {name: w, paths: [/], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}\n")
	for i := range n {
		fmt.Fprintf(&b, "- {name: r%d, paths: [/a%d]}\n", i, i)
	}
	return b.String()
}

// Routes of the same path, hosts and methods are said to tie in one line
// for all of them (which one the import gives their requests to, naming
// the first five), not one line per pair of them: 100 routes of /a, each
// of its own plugin, are one such line, and the report says under 4 things
// of each plugin (its key, its string prefix), not one of each pair.
func TestImportKongReportOfManyTiedRoutesIsBounded(t *testing.T) {
	const n = 100
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nroutes:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {name: r%d, paths: [/a], plugins: [{name: rate-limiting, config: {minute: %d, limit_by: ip}}]}\n", i, i+1)
	}
	tr, err := migrate.Import("kong", b.String(), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ties := 0
	for _, d := range tr.Differences {
		if strings.Contains(d.Text, "match the same requests on /a") {
			ties++
			if !strings.Contains(d.Text, fmt.Sprintf("%d routes, route r0, route r1", n)) || !strings.Contains(d.Text, fmt.Sprintf("gives them to route r%d,", n-1)) {
				t.Errorf("want the %d routes counted, the first named, and the last chosen: %q", n, d.Text)
			}
		}
	}
	if ties != 1 {
		t.Errorf("%d lines say the %d routes of /a tie, want 1", ties, n)
	}
	if len(tr.Differences) >= 4*n {
		t.Errorf("the report of %d routes of one path says %d things, want under %d", n, len(tr.Differences), 4*n)
	}
}
