package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongConsumerServicePluginOnOneHost: consumer alice's plugin
// of service orders (5 a minute) runs in Kong on her requests to orders'
// route, host a.example and path /orders, alone; her request to
// b.example/orders is route web's, where her own plugin (3 a minute)
// runs, in place of web's (100 a minute by address). The rule of her plan leaves out /orders on a.example only (an
// except entry), not on every host.
func TestImportedKongConsumerServicePluginOnOneHost(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins: [{name: key-auth}]
services:
- name: orders
  routes: [{name: orders, hosts: [a.example], paths: [/orders]}]
- name: web
  plugins: [{name: rate-limiting, config: {minute: 100, limit_by: ip}}]
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins:
  - {name: rate-limiting, config: {minute: 3}}
  - {name: rate-limiting, service: orders, config: {minute: 5}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/orders", "alice-key", "192.0.2.1", 6); n != 5 {
		t.Errorf("alice on a.example/orders, where Kong runs her plugin of service orders (5 a minute): %d of 6 admitted, want 5", n)
	}
	if n := admitted(h, "b.example", "/orders", "alice-key", "192.0.2.1", 6); n != 3 {
		t.Errorf("alice on b.example/orders, route web's, where Kong runs her own plugin (3 a minute), not web's (100): %d of 6 admitted, want 3", n)
	}
	if reported(tr, "on every host, where those routes match some hosts only") {
		t.Errorf("the plan's rule still leaves /orders out on every host: %+v", tr.Differences)
	}
}
