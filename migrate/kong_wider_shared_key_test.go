package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// importKongFile imports src as a decK file.
func importKongFile(t *testing.T, src string) *migrate.Translation {
	t.Helper()
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// enforcedConfig is tr's configuration, enforced.
func enforcedConfig(t *testing.T, tr *migrate.Translation) string {
	t.Helper()
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	return files[migrate.ConfigFile]
}

// TestImportedKongConsumerServicePluginReplacesTheGlobalAddressLimitOnItsService:
// a global rate-limiting plugin of limit_by ip (3 a minute per address)
// beside a rate-limiting plugin naming consumer alice and service api (100
// a minute). Kong runs one plugin of a name on a request, the most
// specific: the consumer+service plugin on alice's requests to api, the
// global one on every other request, counted by address. So alice's
// requests to /api are neither charged to nor refused by an address's
// count, however spent; the clients of the other plans (bob, whose key is
// not listed, and a client without a key) share one count per address;
// alice elsewhere is limited per address too. The rules engine cannot
// leave paths out of a rule for one plan of several, so alice's count
// elsewhere is a copy of the global rule, apart from the others' at her
// address: the report says so.
func TestImportedKongConsumerServicePluginReplacesTheGlobalAddressLimitOnItsService(t *testing.T) {
	tr := importKongFile(t, `_format_version: "3.0"
plugins:
- name: key-auth
- name: rate-limiting
  config: {minute: 3, limit_by: ip, policy: local}
- name: rate-limiting
  consumer: alice
  service: api
  config: {minute: 100, policy: local}
services:
- name: web
  url: http://web.internal
  routes: [{name: web, paths: [/]}]
- name: api
  url: http://api.internal
  routes: [{name: api, paths: [/api]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
`)
	h := serveImported(t, tr)
	cfg := enforcedConfig(t, tr)
	b := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.1", 3)
	c := admitted(h, "a.example", "/shop", "", "192.0.2.1", 3)
	if b+c != 3 {
		t.Errorf("bob and a client without a key on web from one address: %d+%d admitted, Kong 3\n%s", b, c, cfg)
	}
	if a := admitted(h, "a.example", "/api/x", "alice-key", "192.0.2.1", 5); a != 5 {
		t.Errorf("alice on api from an address whose count is spent (her consumer+service plugin, 100 a minute): %d of 5 admitted, Kong 5\n%s", a, cfg)
	}
	if a := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.7", 5); a != 3 {
		t.Errorf("alice on web from a fresh address (the global plugin, 3 a minute per address): %d of 5 admitted, Kong 3\n%s", a, cfg)
	}
	if a := admitted(h, "a.example", "/api/x", "alice-key", "192.0.2.7", 5); a != 5 {
		t.Errorf("alice on api after spending her address's count on web: %d of 5 admitted, Kong 5\n%s", a, cfg)
	}
	reported := false
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "copy") && strings.Contains(d.Text, "apart from the other plans' clients") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("the report does not say that alice's count elsewhere is apart from the others' at her address: %+v", tr.Differences)
	}
}

// TestImportedKongGlobalIPPluginKeepsOneCountOnRoutesWithAndWithoutAuth:
// key-auth runs on service web only; the global rate-limiting plugin
// (limit_by ip, 3 a minute) keeps one count per address across every
// route, as Kong's counter key of a global plugin names no route or
// service. Consumer alice's only plugin is a rate-limiting-advanced one,
// so no consumer's plugin replaces the global rate-limiting anywhere and
// nothing splits it by authentication: one address gets 3 in all on /shop
// (authenticated) and /health (not).
func TestImportedKongGlobalIPPluginKeepsOneCountOnRoutesWithAndWithoutAuth(t *testing.T) {
	tr := importKongFile(t, kongHealthAndWeb(`plugins:
- name: rate-limiting
  config: {minute: 3, limit_by: ip, policy: local}
`, "  plugins: [{name: key-auth}]\n", "")+`consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting-advanced, config: {limit: [100], window_size: [60], identifier: consumer}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
`)
	h := serveImported(t, tr)
	a := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.1", 3)
	b := admitted(h, "a.example", "/health", "bob-key", "192.0.2.1", 3)
	if a+b != 3 {
		t.Errorf("bob from one address on /shop then /health under the global plugin of limit_by ip (3 a minute): %d+%d admitted, Kong admits 3 in all\n%s", a, b, enforcedConfig(t, tr))
	}
	if a := admitted(h, "a.example", "/health", "alice-key", "192.0.2.1", 3); a != 0 {
		t.Errorf("alice from bob's spent address on /health: %d of 3 admitted, Kong 0 (one count per address)\n%s", a, enforcedConfig(t, tr))
	}
	for _, d := range tr.Differences {
		if strings.Contains(d.Text, "routes with and without authentication are two") {
			t.Errorf("the report says the plugin counts apart on the routes with and without authentication, which it does not: %s", d.Text)
		}
	}
}

// TestImportedKongGlobalIPPluginBesideAConsumersOwnKeepsOneCountForTheOthers:
// key-auth runs on service web only; the global rate-limiting plugin
// (limit_by ip, 3 a minute) runs in Kong on every request but alice's on
// web, where her own rate-limiting plugin (100 a minute) runs in its
// place. Its count per address names no route: bob's requests on /shop
// (authenticated) and /health (not) share it. The import keeps that one
// count for the plans without a plugin of its name, over every route, and
// counts alice on /health, where Kong names no consumer, by address in a
// rule of the routes without authentication for her plan: apart from the
// others' at her address there (reported).
func TestImportedKongGlobalIPPluginBesideAConsumersOwnKeepsOneCountForTheOthers(t *testing.T) {
	tr := importKongFile(t, kongHealthAndWeb(`plugins:
- name: rate-limiting
  config: {minute: 3, limit_by: ip, policy: local}
`, "  plugins: [{name: key-auth}]\n", "")+`consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 100, policy: local}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
`)
	h := serveImported(t, tr)
	cfg := enforcedConfig(t, tr)
	a := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.1", 3)
	b := admitted(h, "a.example", "/health", "bob-key", "192.0.2.1", 3)
	if a+b != 3 {
		t.Errorf("bob from one address on /shop then /health: %d+%d admitted, Kong admits 3 in all\n%s", a, b, cfg)
	}
	if a := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.1", 5); a != 5 {
		t.Errorf("alice on /shop (her own plugin, 100 a minute) from bob's spent address: %d of 5 admitted, Kong 5\n%s", a, cfg)
	}
	if a := admitted(h, "a.example", "/health", "alice-key", "192.0.2.7", 5); a != 3 {
		t.Errorf("alice on /health (no consumer named: the global plugin, 3 a minute per address): %d of 5 admitted, Kong 3\n%s", a, cfg)
	}
	reported := false
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "apart from the others' there") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("the report does not say that alice's count on /health is apart from the others' at her address: %+v", tr.Differences)
	}
}
