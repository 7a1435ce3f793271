package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kongWiderIPFile is a decK file of a global rate-limiting plugin of
// limit_by ip (3 a minute per address) beside key-auth, and consumers
// alice (a rate-limiting-advanced plugin of her own) and bob (bobPlugin,
// his own plugin).
func kongWiderIPFile(bobPlugin string) string {
	return `_format_version: "3.0"
plugins:
- name: key-auth
- name: rate-limiting
  config: {minute: 3, limit_by: ip, policy: local}
services:
- name: web
  url: http://web.internal
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting-advanced, config: {limit: [100], window_size: [60], identifier: consumer}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
  plugins: [` + bobPlugin + `]
`
}

// TestImportedKongWiderLimitByIPCountsConsumersByAddress: Kong runs one
// plugin of each name on a request, so a consumer without a rate-limiting
// plugin of its own still runs the global one, which counts as its
// limit_by says: by the client's address, the consumers behind one address
// together and one consumer's requests from two addresses apart. A
// consumer with a rate-limiting plugin of its own runs that one instead.
func TestImportedKongWiderLimitByIPCountsConsumersByAddress(t *testing.T) {
	t.Run("consumers without a plugin of its name count by address", func(t *testing.T) {
		tr, err := migrate.Import("kong", kongWiderIPFile(`{name: rate-limiting-advanced, config: {limit: [100], window_size: [60], identifier: consumer}}`), "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		h := serveImported(t, tr)
		a := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.1", 3)
		b := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.1", 3)
		if a+b != 3 {
			t.Errorf("alice and bob from one address under the global plugin of limit_by ip (3 a minute per address): %d+%d admitted, Kong admits 3 in all", a, b)
		}
		if c := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.9", 3); c != 3 {
			t.Errorf("alice from a second address: %d of 3 admitted, Kong (limit_by ip) admits 3", c)
		}
	})
	t.Run("a consumer's own plugin of its name replaces it", func(t *testing.T) {
		tr, err := migrate.Import("kong", kongWiderIPFile(`{name: rate-limiting, config: {minute: 100, policy: local}}`), "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		h := serveImported(t, tr)
		if a := admitted(h, "a.example", "/shop", "alice-key", "192.0.2.1", 3); a != 3 {
			t.Errorf("alice: %d of 3 admitted, want 3", a)
		}
		if b := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.1", 5); b != 5 {
			t.Errorf("bob, whose own rate-limiting plugin (100 a minute) Kong runs in place of the global one, behind alice's exhausted address: %d of 5 admitted, want 5", b)
		}
	})
}
