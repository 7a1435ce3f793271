package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// A plugin on a catch-all route (/) over 1,200 routes without one of path
// /health, each of a host of its own (sN.example), then 1,200 more each of
// a host and a path of its own (hN.example, /pN), leaves out the first
// ones by one except entry of all their hosts, then the next 31 by an
// entry each, and keeps the others in the rule, reported in one line: a
// rule's except entries are bounded (32), whatever the file's size, and
// the report with them.
func TestKongImportBoundsTheExceptEntries(t *testing.T) {
	const n = 1200
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nroutes:\n- {name: w, paths: [/], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}\n")
	for i := range n {
		fmt.Fprintf(&b, "- {name: s%d, hosts: [s%d.example], paths: [/health]}\n", i, i)
	}
	for i := range n {
		fmt.Fprintf(&b, "- {name: r%d, hosts: [h%d.example], paths: [/p%d]}\n", i, i, i)
	}
	start := time.Now()
	tr, err := migrate.Import("kong", b.String(), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("importing %d routes took %v", 2*n, d)
	}
	if len(tr.SluiceRules) != 1 {
		t.Fatalf("%d rules, want 1", len(tr.SluiceRules))
	}
	if e := tr.SluiceRules[0].Except; len(e) != 32 {
		t.Errorf("rule w has %d except entries, want 32", len(e))
	}
	if lines := strings.Count(tr.Report(), "\n"); lines >= 100 {
		t.Errorf("the report of %d routes is %d lines, want under 100", 2*n, lines)
	}
	if !reported(tr, fmt.Sprintf("%d routes, r31 (/p31 /p31/)", n-31)) {
		t.Errorf("the routes past the bound are not reported in one line: %+v", tr.Differences)
	}
	if !reported(tr, "only where the Host header is the name alone") {
		t.Errorf("the hosts' ports, which the except entries do not leave out, are not reported: %+v", tr.Differences)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	for i, c := range []struct {
		host, path string
		want       int
	}{
		{"h0.example", "/p0", 5},
		{"h30.example", "/p30", 5},
		{"h1199.example", "/p1199", 3}, // past the bound: counted, as reported
		{"s1199.example", "/health", 5},
		{"a.example", "/health", 3},
	} {
		if got := admitted(h, c.host, c.path, "", fmt.Sprintf("192.0.2.%d", i+1), 5); got != c.want {
			t.Errorf("%s%s: %d of 5 admitted, want %d", c.host, c.path, got, c.want)
		}
	}
}
