package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongTopLevelPluginsNameTheirEntity: Kong's declarative
// configuration may list a plugin at the top level with the service,
// route or consumer it applies to (service: orders); such a plugin is
// that entity's, not a global one: it limits /orders, not /search, and
// the consumer's plugin is the consumer's plan.
func TestImportedKongTopLevelPluginsNameTheirEntity(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: orders
  url: http://orders
  routes: [{name: orders, paths: [/orders]}]
- name: search
  url: http://search
  routes: [{name: search, paths: [/search]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
plugins:
- name: key-auth
- name: rate-limiting
  service: orders
  config: {hour: 3}
- name: rate-limiting
  route: {name: search}
  config: {hour: 5}
- name: rate-limiting
  consumer: alice
  config: {hour: 1}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	count := func(path, key string, n int) int {
		ok := 0
		for range n {
			if sendKey(h, path, key, "192.0.2.1") == 200 {
				ok++
			}
		}
		return ok
	}
	if n := count("/orders", "bob-key", 4); n != 3 {
		t.Errorf("/orders: %d of 4 admitted, want the orders service plugin's 3", n)
	}
	if n := count("/search", "bob-key", 6); n != 5 {
		t.Errorf("/search: %d of 6 admitted, want the search route plugin's 5", n)
	}
	if n := count("/search", "alice-key", 2); n != 1 {
		t.Errorf("alice on /search: %d of 2 admitted, want her plugin's 1", n)
	}
}

// TestImportKongNestedPluginOfAConsumerIsHers: a service's plugin that
// names a consumer (consumer: alice) runs in Kong on alice's requests to
// the service alone: a rule of the service's routes for alice's plan, not
// the service's plugin for every client.
func TestImportKongNestedPluginOfAConsumerIsHers(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
- name: key-auth
services:
- name: orders
  routes: [{name: orders, paths: [/orders]}]
  plugins:
  - {name: rate-limiting, config: {hour: 100}}
  - {name: rate-limiting, consumer: alice, config: {hour: 1}}
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	n := 0
	for range 3 {
		if sendKey(h, "/orders", "bob-key", "192.0.2.1") == 200 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("bob on /orders: %d of 3 admitted, want 3 (alice's plugin is not his)", n)
	}
	n = 0
	for range 2 {
		if sendKey(h, "/orders", "alice-key", "192.0.2.2") == 200 {
			n++
		}
	}
	if n != 1 {
		t.Errorf("alice on /orders: %d of 2 admitted, want her plugin's 1", n)
	}
}
