package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongConsumerPluginOnOneService: a rate-limiting plugin that
// names both a consumer and a service (declared under the consumer with
// service:, under the service with consumer:, or at the top level with
// both) runs in Kong on that consumer's requests to that service's routes
// only, in place of every other rate-limiting plugin there (the consumer's
// own, the route's, the service's, the global one), and counts them
// together. Elsewhere the consumer is limited as before.
func TestImportedKongConsumerPluginOnOneService(t *testing.T) {
	const head = `_format_version: "3.0"
services:
- name: orders
  routes: [{name: orders, paths: [/orders]}]
- name: search
  routes: [{name: search, paths: [/search]}]
`
	forms := map[string]string{
		"under the consumer": `plugins:
- name: key-auth
- {name: rate-limiting, config: {minute: 3}}
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins:
  - {name: rate-limiting, service: orders, config: {minute: 5}}
`,
		"at the top level": `plugins:
- name: key-auth
- {name: rate-limiting, config: {minute: 3}}
- {name: rate-limiting, consumer: alice, service: {name: orders}, config: {minute: 5}}
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
`,
	}
	underService := strings.Replace(head, "  routes: [{name: orders, paths: [/orders]}]\n",
		"  routes: [{name: orders, paths: [/orders]}]\n  plugins: [{name: rate-limiting, consumer: alice, config: {minute: 5}}]\n", 1)
	for name, rest := range forms {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("kong", head+rest, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			h := serveImported(t, tr)
			if n := admitted(h, "x.example", "/orders", "alice-key", "192.0.2.1", 6); n != 5 {
				t.Errorf("alice on /orders, where Kong runs her plugin of service orders (5 a minute): %d of 6 admitted, want 5", n)
			}
			if n := admitted(h, "x.example", "/search", "alice-key", "192.0.2.1", 4); n != 3 {
				t.Errorf("alice on /search, where Kong runs the global plugin (3 a minute): %d of 4 admitted, want 3", n)
			}
			if n := admitted(h, "x.example", "/orders", "bob-key", "192.0.2.2", 4); n != 3 {
				t.Errorf("bob on /orders, where Kong runs the global plugin (3 a minute): %d of 4 admitted, want 3", n)
			}
			if hasDifference(tr, false, "not imported") {
				t.Errorf("the report still says a plugin is not imported: %+v", tr.Differences)
			}
		})
	}
	t.Run("under the service", func(t *testing.T) {
		tr, err := migrate.Import("kong", underService+`plugins:
- name: key-auth
- {name: rate-limiting, config: {minute: 3}}
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
`, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		load(t, tr, true)
		h := serveImported(t, tr)
		if n := admitted(h, "x.example", "/orders", "alice-key", "192.0.2.1", 6); n != 5 {
			t.Errorf("alice on /orders: %d of 6 admitted, want her plugin's 5", n)
		}
		if n := admitted(h, "x.example", "/search", "alice-key", "192.0.2.1", 4); n != 3 {
			t.Errorf("alice on /search: %d of 4 admitted, want the global plugin's 3", n)
		}
	})
}

// TestImportedKongConsumerPluginOnOneServiceBeforeHerOwn: a consumer with
// a plugin of her own (1 a minute) and one on service orders (5 a minute):
// Kong runs the second on orders' routes and the first elsewhere; a route
// plugin of orders (2 a minute) limits the other consumers there.
func TestImportedKongConsumerPluginOnOneServiceBeforeHerOwn(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
- name: key-auth
services:
- name: orders
  routes:
  - name: orders
    paths: [/orders]
    plugins: [{name: rate-limiting, config: {minute: 2}}]
- name: search
  routes: [{name: search, paths: [/search]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins:
  - {name: rate-limiting, config: {minute: 1}}
  - {name: rate-limiting, service: orders, config: {minute: 5}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "x.example", "/orders", "alice-key", "192.0.2.1", 6); n != 5 {
		t.Errorf("alice on /orders, where Kong runs her plugin of service orders (5 a minute): %d of 6 admitted, want 5", n)
	}
	if n := admitted(h, "x.example", "/search", "alice-key", "192.0.2.1", 2); n != 1 {
		t.Errorf("alice on /search, where Kong runs her own plugin (1 a minute): %d of 2 admitted, want 1", n)
	}
	if n := admitted(h, "x.example", "/orders", "bob-key", "192.0.2.2", 3); n != 2 {
		t.Errorf("bob on /orders, where Kong runs the route's plugin (2 a minute): %d of 3 admitted, want 2", n)
	}
}

// TestImportedKongConsumerPluginOnOneServiceWhereAuthIsNotGlobal: key-auth
// runs on services orders and search, not on web; the global plugin (3 a
// minute) counts per consumer on the first two and per address on web.
// Alice's plugin on orders (5 a minute) replaces it on orders' routes for
// her alone: the global plugin's rule, which counts each client apart,
// leaves them out for her plan only.
func TestImportedKongConsumerPluginOnOneServiceWhereAuthIsNotGlobal(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
- {name: rate-limiting, config: {minute: 3}}
services:
- name: orders
  plugins: [{name: key-auth}]
  routes: [{name: orders, paths: [/orders]}]
- name: search
  plugins: [{name: key-auth}]
  routes: [{name: search, paths: [/search]}]
- name: web
  routes: [{name: web, paths: [/web]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins:
  - {name: rate-limiting, service: orders, config: {minute: 5}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	for _, c := range []struct {
		path, key, addr string
		n, want         int
		kong            string
	}{
		{"/orders", "alice-key", "192.0.2.1", 6, 5, "her plugin of service orders (5 a minute)"},
		{"/search", "alice-key", "192.0.2.1", 4, 3, "the global plugin per consumer (3 a minute)"},
		{"/web", "alice-key", "192.0.2.1", 4, 3, "the global plugin per address, no consumer named (3 a minute)"},
		{"/orders", "bob-key", "192.0.2.2", 4, 3, "the global plugin per consumer (3 a minute)"},
	} {
		if n := admitted(h, "x.example", c.path, c.key, c.addr, c.n); n != c.want {
			t.Errorf("%s on %s, where Kong runs %s: %d of %d admitted, want %d", c.key, c.path, c.kong, n, c.n, c.want)
		}
	}
}
