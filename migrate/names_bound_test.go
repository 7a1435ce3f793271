package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// Rules of one base name are numbered without trying each number against
// every rule: an haproxy.cfg of 2,500 deny rules in one frontend, each a
// rule named for it (fe, fe-2, …), took the import 25 s of a core, its
// work growing with the cube of the rules.
func TestManyRulesOfOneNameAreNamedQuickly(t *testing.T) {
	const rules = 3000
	var b strings.Builder
	b.WriteString("frontend fe\n    bind :80\n    stick-table type ip size 100k expire 30s store http_req_rate(10s)\n    http-request track-sc0 src\n")
	for i := range rules {
		fmt.Fprintf(&b, "    acl a%d path_beg /p%d\n    http-request deny deny_status 429 if a%d { sc_http_req_rate(0) gt %d }\n", i, i, i, i+1)
	}
	start := time.Now()
	tr, err := migrate.Import("haproxy", b.String(), "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("%d rules took %v", rules, d)
	}
	seen := map[string]bool{}
	for _, r := range tr.SluiceRules {
		if seen[r.Name] {
			t.Fatalf("two rules named %s", r.Name)
		}
		seen[r.Name] = true
	}
	if len(seen) != rules {
		t.Errorf("%d rules, want %d", len(seen), rules)
	}
}
