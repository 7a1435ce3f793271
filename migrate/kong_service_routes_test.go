package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongServicePluginAcrossHostsCountsOnce: a service's plugin
// (3 a minute by address) over routes of different hosts and methods
// (a.example/orders, b.example/billing, POST a.example/refunds) counts a
// client once across them, as Kong does, and nothing else: a request one
// route's host or method makes on another's path is web's route, which
// has no plugin.
func TestImportedKongServicePluginAcrossHostsCountsOnce(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: shop
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
  routes:
  - {name: orders, hosts: [a.example], paths: [/orders]}
  - {name: billing, hosts: [b.example], paths: [/billing]}
  - {name: refunds, hosts: [a.example], paths: [/refunds], methods: [POST]}
- name: web
  routes: [{name: web, paths: [/]}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example", "/orders", "192.0.2.1", 200},
		{"GET", "b.example", "/billing/1", "192.0.2.1", 200},
		{"POST", "a.example", "/refunds", "192.0.2.1", 200},
		{"GET", "b.example", "/billing", "192.0.2.1", 429}, // 3 a minute across the routes
		{"GET", "a.example", "/orders", "192.0.2.1", 429},
		{"GET", "a.example", "/billing", "192.0.2.1", 200}, // web's
		{"GET", "b.example", "/orders", "192.0.2.1", 200},  // web's
		{"GET", "a.example", "/refunds", "192.0.2.1", 200}, // web's: refunds takes POST only
		{"GET", "a.example", "/orders", "192.0.2.2", 200},
	})
	if len(tr.SluiceRules) != 1 {
		t.Errorf("%d rules, want 1: %+v", len(tr.SluiceRules), tr.SluiceRules)
	}
	if reported(tr, "different hosts or methods") || !hasDifference(tr, true, "different hosts or methods") {
		t.Errorf("the report does not say the rule matches each route's own hosts and methods, one count: %+v", tr.Differences)
	}
}

// TestImportedKongServicePluginAlternativesLeaveOutAndCountByPath: the
// alternatives of a service's plugin over routes of different hosts
// (limit_by path /orders/x, 3 a minute) each give way to what Kong runs
// instead: route special's own plugin (7 a minute) below a.example/orders,
// and the requests on exactly /orders/x, counted together on a.example
// only, the host of the route that path is on; b.example/orders/x is
// web's route, under the global plugin alone.
func TestImportedKongServicePluginAlternativesLeaveOutAndCountByPath(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
- name: rate-limiting
  config: {minute: 100, limit_by: ip}
services:
- name: shop
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: path, path: /orders/x}}]
  routes:
  - {name: orders, hosts: [a.example], paths: [/orders]}
  - {name: billing, hosts: [b.example], paths: [/billing]}
  - name: special
    hosts: [a.example]
    paths: [/orders/special]
    plugins: [{name: rate-limiting, config: {minute: 7}}]
- name: web
  routes: [{name: web, paths: [/]}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	reqs := []request{
		{"GET", "a.example", "/orders/1", "192.0.2.1", 200},
		{"GET", "a.example", "/orders/2", "192.0.2.1", 200},
		{"GET", "b.example", "/billing", "192.0.2.1", 200},
		{"GET", "b.example", "/billing", "192.0.2.1", 429}, // 3 a minute by address, across the routes
	}
	for range 4 {
		reqs = append(reqs, request{"GET", "a.example", "/orders/special/1", "192.0.2.1", 200}) // special's 7
	}
	reqs = append(reqs,
		request{"GET", "a.example", "/orders/x", "192.0.2.2", 200},
		request{"GET", "a.example", "/orders/x", "192.0.2.3", 200},
		request{"GET", "a.example", "/orders/x", "192.0.2.4", 200},
		request{"GET", "a.example", "/orders/x", "192.0.2.5", 429}, // /orders/x: 3 a minute together
		request{"GET", "b.example", "/orders/x", "192.0.2.5", 200}, // web's: the global plugin's 100
	)
	expectRequests(t, serveImported(t, tr), reqs)
}

// TestImportedKongServicePluginSplitByAuthenticationKeepsEachRoutesHost:
// a service's plugin (3 a minute by consumer) over routes of two hosts
// with key-auth, and a route without it below one of them
// (a.example/orders/public), is two rules: the authenticated routes' of an
// alternative per host, one count of a key across them, which leaves the
// public route out on a.example only; the public route's, by address.
// b.example/orders/x is no route's.
func TestImportedKongServicePluginSplitByAuthenticationKeepsEachRoutesHost(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: shop
  plugins: [{name: rate-limiting, config: {minute: 3}}]
  routes:
  - {name: orders, hosts: [a.example], paths: [/orders], plugins: [{name: key-auth}]}
  - {name: billing, hosts: [b.example], paths: [/billing], plugins: [{name: key-auth}]}
  - {name: public, hosts: [a.example], paths: [/orders/public]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	for i, c := range []struct {
		host, path, addr string
		want             int
	}{
		{"a.example", "/orders/1", "192.0.2.1", 200},
		{"b.example", "/billing", "192.0.2.2", 200},
		{"a.example", "/orders/2", "192.0.2.3", 200},
		{"b.example", "/billing", "192.0.2.4", 429}, // the key's 3 across the hosts
		{"a.example", "/orders/public/x", "192.0.2.5", 200},
		{"a.example", "/orders/public/x", "192.0.2.5", 200}, // the public route's, by address
		{"b.example", "/orders/x", "192.0.2.6", 200},        // no route's
	} {
		if got := sendKeyTo(h, c.host, c.path, "alice-key", c.addr); got != c.want {
			t.Errorf("request %d, %s%s from %s with alice's key: %d, want %d", i, c.host, c.path, c.addr, got, c.want)
		}
	}
}
