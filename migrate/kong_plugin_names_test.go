package migrate_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongHeaderLimitKeepsItsHeaderBesideConsumerPlans: a global
// rate-limiting plugin of limit_by header counts per value of its header
// (X-Tenant); a consumer with a plugin and a key-auth credential makes a
// plan chosen by the key-auth headers. The header must stay the plugin's
// count (a rule keyed header:X-Tenant for the imported plan's clients),
// not give way to the key headers: tenants a and b from one address count
// apart.
func TestImportedKongHeaderLimitKeepsItsHeaderBesideConsumerPlans(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
  - name: rate-limiting
    config: {minute: 1, limit_by: header, header_name: X-Tenant}
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins: [{name: rate-limiting, config: {minute: 5}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/", "a", "192.0.2.1", 200},
		{"/", "b", "192.0.2.1", 200}, // another tenant, another count
		{"/", "a", "192.0.2.1", 429},
	})
}

// TestImportedKongConsumersAdvancedPluginKeepsTheGlobalRateLimiting: Kong
// runs one plugin of each name on a request, the most specific: a
// consumer's rate-limiting-advanced replaces only a wider
// rate-limiting-advanced, and the global rate-limiting (another name)
// still runs on the consumer's requests. The consumer's plan must hold the
// global plugin's limits beside its own: its third request in a minute is
// refused by the global 2.
func TestImportedKongConsumersAdvancedPluginKeepsTheGlobalRateLimiting(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
  - {name: rate-limiting, config: {minute: 2}}
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins:
      - {name: rate-limiting-advanced, config: {limit: [100], window_size: [60], window_type: fixed}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	var got []int
	for range 3 {
		got = append(got, sendKey(h, "/x", "acme-secret", "192.0.2.1"))
	}
	if got[1] != 200 || got[2] != 429 {
		t.Errorf("acme three times in a minute: %v, want the third refused by the global rate-limiting's 2", got)
	}
}

// TestImportedKongConsumersAdvancedPluginKeepsARouteRateLimiting: the same
// where the imported plugins are rules (a route's rate-limiting beside the
// global one): the rule of the route's rate-limiting applies to the plan of
// a consumer that has only a rate-limiting-advanced plugin.
func TestImportedKongConsumersAdvancedPluginKeepsARouteRateLimiting(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
  - {name: rate-limiting, config: {minute: 100}}
services:
  - name: orders
    url: http://orders.internal
    routes:
      - name: orders
        paths: [/orders]
        plugins: [{name: rate-limiting, config: {minute: 2}}]
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins:
      - {name: rate-limiting-advanced, config: {limit: [100], window_size: [60], window_type: fixed}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	var got []int
	for range 3 {
		got = append(got, sendKey(h, "/orders", "acme-secret", "192.0.2.1"))
	}
	if got[1] != 200 || got[2] != 429 {
		t.Errorf("acme three times on /orders in a minute: %v, want the third refused by the route's rate-limiting (2)", got)
	}
}

// TestImportedKongConsumerRunsBothOfItsPlugins: a consumer with a
// rate-limiting and a rate-limiting-advanced plugin: Kong runs both on its
// requests (one of each name). The plan must hold both: the third request
// in a minute is refused by its rate-limiting's 2, not only the advanced
// plugin's 100.
func TestImportedKongConsumerRunsBothOfItsPlugins(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
  - {name: rate-limiting, config: {minute: 100}}
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
    plugins:
      - {name: rate-limiting-advanced, config: {limit: [100], window_size: [60], window_type: fixed}}
      - {name: rate-limiting, config: {minute: 2}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	var got []int
	for range 3 {
		got = append(got, sendKey(h, "/x", "acme-secret", "192.0.2.1"))
	}
	if got[1] != 200 || got[2] != 429 {
		t.Errorf("acme three times in a minute: %v, want the third refused by acme's own rate-limiting (2)", got)
	}
}

// TestImportedKongGroupPluginOfTheOtherNameRunsBesideTheConsumers: a
// consumer's plugin replaces its group's of the same name only; the
// group's plugin of the other name runs beside it. vip's own
// rate-limiting (4) and its group gold's rate-limiting-advanced (3): 3
// admitted; pro's own rate-limiting-advanced (5) replaces its group's (3):
// 5 admitted.
func TestImportedKongGroupPluginOfTheOtherNameRunsBesideTheConsumers(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
consumer_groups:
  - name: gold
    plugins: [{name: rate-limiting-advanced, config: {limit: [3], window_size: [60]}}]
consumers:
  - username: vip
    keyauth_credentials: [{key: vip-key}]
    groups: [{name: gold}]
    plugins: [{name: rate-limiting, config: {minute: 4}}]
  - username: pro
    keyauth_credentials: [{key: pro-key}]
    groups: [{name: gold}]
    plugins: [{name: rate-limiting-advanced, config: {limit: [5], window_size: [60]}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		key      string
		admitted int
	}{{"vip-key", 3}, {"pro-key", 5}} {
		n := 0
		for range 7 {
			if sendKey(h, "/x", c.key, fmt.Sprintf("192.0.2.%d", i+1)) == 200 {
				n++
			}
		}
		if n != c.admitted {
			t.Errorf("%s: %d of 7 admitted, want %d", c.key, n, c.admitted)
		}
	}
}
