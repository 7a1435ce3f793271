package migrate_test

import (
	"strings"
	"testing"
)

// TestImportedKongConsumerServicePluginOnTheCatchAllReplacesTheGlobalIPPlugin:
// the global limit_by ip plugin (3 a minute) is split by authentication
// (carol has her own rate-limiting plugin): key-auth runs on web (the
// catch-all "/") only. Kong runs the most specific plugin of a name, so
// alice's consumer+service plugin on web (100 a minute) replaces the
// global plugin on her requests to web: they are neither charged to nor
// refused by an address's count, while on /health (a route without
// authentication, below "/") the global plugin counts her by address. The
// copy of the global rule for her plan cannot leave "/" out by
// except_paths (that would leave /health out too), so it matches the other
// routes' paths alone; the report says the copy leaves out her plugin's
// routes, and never that it cannot.
func TestImportedKongConsumerServicePluginOnTheCatchAllReplacesTheGlobalIPPlugin(t *testing.T) {
	tr := importKongFile(t, kongHealthAndWeb(`plugins:
- name: rate-limiting
  config: {minute: 3, limit_by: ip, policy: local}
- name: rate-limiting
  consumer: alice
  service: web
  config: {minute: 100, policy: local}
`, "  plugins: [{name: key-auth}]\n", "")+`consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
- username: carol
  keyauth_credentials: [{key: carol-key}]
  plugins: [{name: rate-limiting, config: {minute: 100, policy: local}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
`)
	h := serveImported(t, tr)
	cfg := enforcedConfig(t, tr)
	if n := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.1", 3); n != 3 {
		t.Fatalf("bob on /shop: %d of 3 (the probe is wrong)", n)
	}
	if n := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.1", 5); n != 5 {
		t.Errorf("alice on /shop (web: her consumer+service plugin, 100 a minute) from a spent address: %d of 5 admitted, Kong 5\n%s", n, cfg)
	}
	if n := admitted(h, "a.example", "/health", "alice-key", "192.0.2.7", 5); n != 3 {
		t.Errorf("alice on /health (the global plugin): %d of 5 admitted, Kong 3\n%s", n, cfg)
	}
	cannot, leaves := false, false
	for _, d := range tr.Differences {
		cannot = cannot || !d.Same && strings.Contains(d.Text, "rule global-consumer-alice of plan consumer-alice cannot leave out")
		leaves = leaves || strings.Contains(d.Text, "global-consumer-alice, which leaves out this plugin's routes")
	}
	if cannot || !leaves {
		t.Errorf("the report says that rule global-consumer-alice cannot leave out the plugin's routes: %t, that it leaves them out: %t (want false, true)", cannot, leaves)
	}
}
