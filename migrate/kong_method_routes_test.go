package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongGlobalPluginLeavesOutMethodRoutes: a service whose
// routes split one path by method (GET and POST /orders), each run by a
// plugin more specific than the global one. Kong runs the global plugin
// on none of their requests, and a request of another method on /orders
// matches no route (Kong answers 404 before any plugin runs), so the
// global plugin's rule leaves /orders out: a client's orders do not spend
// its /search quota.
func TestImportedKongGlobalPluginLeavesOutMethodRoutes(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
- name: rate-limiting
  config: {hour: 10, limit_by: ip}
services:
- name: orders
  url: http://orders:8080
  plugins:
  - name: rate-limiting
    config: {hour: 5, limit_by: ip}
  routes:
  - {name: orders-read, paths: [/orders], methods: [GET]}
  - {name: orders-write, paths: [/orders], methods: [POST]}
- name: search
  url: http://search
  routes:
  - {name: search, paths: [/search]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	n := 0
	for range 6 {
		if sendKey(h, "/orders/1", "", "192.0.2.1") == 200 {
			n++
		}
	}
	if n != 5 {
		t.Errorf("GET /orders/1: %d of 6 admitted, want the service plugin's 5", n)
	}
	n = 0
	for range 11 {
		if sendKey(h, "/search", "", "192.0.2.1") == 200 {
			n++
		}
	}
	if n != 10 {
		t.Errorf("/search after 5 orders: %d of 11 admitted, want the global plugin's 10 (Kong does not run it on /orders)", n)
	}
}
