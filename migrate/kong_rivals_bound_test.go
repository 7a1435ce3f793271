package migrate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/migrate"
)

// A decK file near MaxPlaces (2,400 services of two route paths each,
// every other one with a plugin, and a catch-all service with one) is
// imported in seconds: the rule of each plugin is weighed against the
// routes without one, each route's match and patterns made once, not once
// per plugin (which took 13.7 s without -race, more than 400 s with it).
func TestKongImportBoundsTheRivalRoutes(t *testing.T) {
	var b strings.Builder
	b.WriteString("_format_version: \"3.0\"\nservices:\n")
	const services = 2400
	for i := range services {
		fmt.Fprintf(&b, "- name: s%d\n", i)
		if i%2 == 0 {
			b.WriteString("  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\n")
		}
		fmt.Fprintf(&b, "  routes: [{name: r%d, paths: [/s%d, /t%d/u]}]\n", i, i, i)
	}
	b.WriteString("- name: web\n  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\n  routes: [{name: web, paths: [/]}]\n")
	start := time.Now()
	tr, err := migrate.Import("kong", b.String(), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("importing %d services took %v", services, d)
	}
	if n := len(tr.SluiceRules); n != services/2+1 {
		t.Errorf("%d rules, want %d", n, services/2+1)
	}
	for _, r := range tr.SluiceRules {
		if r.Name == "web" && len(r.ExceptPaths) != 4*services {
			t.Errorf("web's rule leaves out %d paths, want %d (/sN, /sN/, /tN/u and /tN/u/ of every route)", len(r.ExceptPaths), 4*services)
		}
	}
}
