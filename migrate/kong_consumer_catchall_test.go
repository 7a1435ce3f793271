package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongConsumerServicePluginLeavesOutAnotherServicesRoute: with
// key-auth global, alice's plugin on the catch-all service web (5 a
// minute) and web's own (3 a minute) run on web's routes alone. Kong gives
// /health to route health, of a service without a plugin: neither alice
// nor bob is limited there. On /shop alice has 5, bob 3.
func TestImportedKongConsumerServicePluginLeavesOutAnotherServicesRoute(t *testing.T) {
	src := kongHealthAndWeb("plugins: [{name: key-auth}]\n", "  plugins: [{name: rate-limiting, config: {minute: 3}}]\n", "") + `consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, service: web, config: {minute: 5}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/health", "alice-key", "192.0.2.1", 7); n != 7 {
		t.Errorf("alice on /health, where Kong runs no rate-limiting plugin: %d of 7 admitted, want 7", n)
	}
	if n := admitted(h, "a.example", "/health", "bob-key", "192.0.2.2", 5); n != 5 {
		t.Errorf("bob on /health, where Kong runs no rate-limiting plugin: %d of 5 admitted, want 5", n)
	}
	if n := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.1", 7); n != 5 {
		t.Errorf("alice on /shop, where Kong runs her plugin of service web (5 a minute): %d of 7 admitted, want 5", n)
	}
	if n := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.2", 5); n != 3 {
		t.Errorf("bob on /shop, where Kong runs web's plugin (3 a minute): %d of 5 admitted, want 3", n)
	}
}

// TestImportedKongGlobalPluginLimitsAConsumerOffHerService: key-auth and
// a global plugin (3 a minute) run on every route; alice's plugin on the
// catch-all service web (5 a minute) runs in place of the global one on
// the requests Kong's router gives web's routes alone. On /health, route
// health's, Kong runs the global plugin for her: 3 a minute.
func TestImportedKongGlobalPluginLimitsAConsumerOffHerService(t *testing.T) {
	src := kongHealthAndWeb("plugins: [{name: key-auth}, {name: rate-limiting, config: {minute: 3}}]\n", "", "") + `consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, service: web, config: {minute: 5}}]
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/health", "alice-key", "192.0.2.1", 5); n != 3 {
		t.Errorf("alice on /health, where Kong runs the global plugin (3 a minute): %d of 5 admitted, want 3", n)
	}
	if n := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.1", 7); n != 5 {
		t.Errorf("alice on /shop, where Kong runs her plugin of service web (5 a minute): %d of 7 admitted, want 5", n)
	}
	if n := admitted(h, "a.example", "/health", "bob-key", "192.0.2.2", 5); n != 3 {
		t.Errorf("bob on /health, where Kong runs the global plugin (3 a minute): %d of 5 admitted, want 3", n)
	}
}
