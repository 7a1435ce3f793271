package migrate_test

import (
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongLimitByPathKeepsItsRoutesHosts: a route's plugin with
// limit_by path (2 a minute) on a route of host a.example and method GET
// counts the requests on exactly its path together, and the others by
// address, on that route alone: Kong's router gives the route no request
// of another host or method, so b.example/orders and POST a.example/orders
// are not the plugin's. The path's rule matches the route's hosts and
// methods, as the address rule does.
func TestImportedKongLimitByPathKeepsItsRoutesHosts(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: shop
  routes:
  - name: orders
    hosts: [a.example]
    methods: [GET, HEAD]
    paths: [/orders]
    plugins: [{name: rate-limiting, config: {minute: 2, limit_by: path, path: /orders}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "b.example", "/orders", "192.0.2.1", 200}, // no route of Kong's: not the plugin's
		{"GET", "b.example", "/orders", "192.0.2.2", 200},
		{"GET", "b.example", "/orders", "192.0.2.3", 200},
		{"POST", "a.example", "/orders", "192.0.2.4", 200}, // nor a method the route does not match
		{"POST", "a.example", "/orders", "192.0.2.5", 200},
		{"GET", "a.example", "/orders", "192.0.2.6", 200},
		{"GET", "a.example", "/orders", "192.0.2.7", 200},
		{"GET", "a.example", "/orders", "192.0.2.8", 429}, // the path's 2, all clients together
		{"GET", "a.example", "/orders/1", "192.0.2.8", 200},
		{"GET", "a.example", "/orders/2", "192.0.2.8", 200},
		{"GET", "a.example", "/orders/3", "192.0.2.8", 429}, // other paths: 2 by address
	})
}

// TestImportedKongLimitByPathWithoutAuthenticationCountsEveryPlan: a
// service's plugin with limit_by path /pub/x (2 a minute) over a route
// with key-auth (/api) and one without (/pub): on /pub Kong names no
// consumer, so consumer alice's plugin does not run there, and her
// requests to /pub/x count with everyone's. The rule of the path counts
// the clients of every plan, as the address rule of /pub does.
func TestImportedKongLimitByPathWithoutAuthenticationCountsEveryPlan(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: shop
  plugins: [{name: rate-limiting, config: {minute: 2, limit_by: path, path: /pub/x}}]
  routes:
  - {name: api, paths: [/api], plugins: [{name: key-auth}]}
  - {name: pub, paths: [/pub]}
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 1000}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	got := []int{
		sendKeyTo(h, "a.example", "/pub/x", "alice-key", "192.0.2.1"),
		sendKeyTo(h, "a.example", "/pub/x", "", "192.0.2.2"),
		sendKeyTo(h, "a.example", "/pub/x", "alice-key", "192.0.2.3"),
		sendKeyTo(h, "a.example", "/pub/x", "", "192.0.2.4"),
	}
	if want := []int{200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("/pub/x: alice, an address, alice, an address: %v, want %v (the path's 2, everyone's together)", got, want)
	}
}
