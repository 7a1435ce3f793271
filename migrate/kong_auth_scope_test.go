package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportKongConsumerPlanWhereAuthIsNotGlobal: Kong names a request's
// consumer only where an authentication plugin runs, so a consumer's
// rate-limiting plugin applies on those routes only. When key-auth covers
// some services or routes only, the consumer's limits are a rule of the
// authenticated routes' paths for the consumer's plan, and the report
// names the routes where Kong names no consumer.
func TestImportKongConsumerPlanWhereAuthIsNotGlobal(t *testing.T) {
	const consumers = `
plugins:
  - name: rate-limiting
    config: {minute: 100}
consumers:
  - username: alice
    keyauth_credentials: [{key: alice-key}]
    plugins:
      - name: rate-limiting
        config: {minute: 5}
`
	scoped, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    url: http://api
    plugins: [{name: key-auth}]
    routes: [{name: api, paths: [/api]}]
  - name: web
    url: http://web
    routes: [{name: web, paths: [/web]}]
`+consumers, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range scoped.Differences {
		if strings.Contains(d.Text, "route web") && strings.Contains(d.Text, "consumer-alice") {
			found = true
		}
	}
	if !found {
		t.Errorf("the report does not name route web, where Kong names no consumer and plan consumer-alice does not apply: %+v", scoped.Differences)
	}
	i := slices.IndexFunc(scoped.SluiceRules, func(r migrate.Rule) bool { return slices.Equal(r.Plans, []string{"consumer-alice"}) })
	if i < 0 || !slices.Equal(scoped.SluiceRules[i].Paths, []string{"/api", "/api/"}) {
		t.Errorf("rules %+v, want consumer-alice's limits on /api and /api/ only", scoped.SluiceRules)
	}

	global, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    url: http://api
    routes: [{name: api, paths: [/api]}]
  - name: web
    url: http://web
    routes: [{name: web, paths: [/web]}]
`+strings.Replace(consumers, "plugins:\n", "plugins:\n  - name: key-auth\n", 1), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range global.Differences {
		if strings.Contains(d.Text, "route web") {
			t.Errorf("key-auth runs everywhere, yet the report says %q", d.Text)
		}
	}
}

// TestImportedKongConsumerPlanOnlyWhereAuthRuns serves the import of a
// file whose key-auth runs on service api only: Kong runs consumer
// alice's plugin (5 a minute) on api's route, where key-auth names her,
// and on web's route, where nothing names a consumer, the global plugin
// (3 a minute, limit_by consumer), which then counts every request by
// its address, whatever key it carries.
func TestImportedKongConsumerPlanOnlyWhereAuthRuns(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 3}
services:
  - name: api
    url: http://api
    plugins: [{name: key-auth}]
    routes: [{name: api, paths: [/api]}]
  - name: web
    url: http://web
    routes: [{name: web, paths: [/web]}]
consumers:
  - username: alice
    keyauth_credentials: [{key: alice-key}]
    plugins:
      - name: rate-limiting
        config: {minute: 5}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	count := func(path string, keys []string, addr string) int {
		n := 0
		for _, k := range keys {
			if sendKey(h, path, k, addr) == 200 {
				n++
			}
		}
		return n
	}
	four := []string{"alice-key", "alice-key", "alice-key", "alice-key"}
	if n := count("/web", four, "192.0.2.1"); n != 3 {
		t.Errorf("alice on /web, where Kong limits her address by the global plugin's 3 a minute: %d of 4 admitted, want 3", n)
	}
	if n := count("/web", []string{""}, "192.0.2.1"); n != 0 {
		t.Errorf("a request without a key from alice's address on /web, whose count alice spent: %d of 1 admitted, want 0", n)
	}
	if n := count("/api", append(four, "alice-key", "alice-key"), "192.0.2.1"); n != 5 {
		t.Errorf("alice on /api, where Kong runs her plugin's 5 a minute: %d of 6 admitted, want 5", n)
	}
	if n := count("/web", []string{"made-up-1", "made-up-2", "made-up-3", "made-up-4"}, "192.0.2.2"); n != 3 {
		t.Errorf("four made-up keys from one address on /web, where Kong reads no key and counts the address: %d of 4 admitted, want 3", n)
	}
}

// TestImportedKongCatchAllRouteWithoutAuthLeavesTheOthersOut: an
// unauthenticated route of path / takes the requests no longer route
// takes; the rule of the global plugin there leaves out the
// authenticated route /api below it, which Kong's router gives /api's
// requests, so alice's requests on /api spend her own plugin's quota and
// not her address's.
func TestImportedKongCatchAllRouteWithoutAuthLeavesTheOthersOut(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting, config: {minute: 3}}
services:
  - name: api
    plugins: [{name: key-auth}]
    routes: [{name: api, paths: [/api]}]
  - name: web
    routes: [{name: web, paths: [/]}]
consumers:
  - username: alice
    keyauth_credentials: [{key: alice-key}]
    plugins: [{name: rate-limiting, config: {minute: 5}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	n := 0
	for range 6 {
		if sendKey(h, "/api/orders", "alice-key", "192.0.2.1") == 200 {
			n++
		}
	}
	if n != 5 {
		t.Errorf("alice on /api: %d of 6 admitted, want her plugin's 5", n)
	}
	n = 0
	for range 4 {
		if sendKey(h, "/home", "", "192.0.2.1") == 200 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("her address on /, where Kong counts it by the global plugin's 3 a minute: %d of 4 admitted, want 3", n)
	}
}

// TestImportedKongConsumerRuleLeavesOutRoutesWithoutAuthBelow: route
// /api/public, without authentication, lies below the authenticated /api;
// Kong gives its requests to it and names no consumer there, so alice's
// plugin does not apply to them: the consumer's rule leaves it out.
func TestImportedKongConsumerRuleLeavesOutRoutesWithoutAuthBelow(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting, config: {minute: 3}}
routes:
  - {name: api, paths: [/api], plugins: [{name: key-auth}]}
  - {name: public, paths: [/api/public]}
consumers:
  - username: alice
    keyauth_credentials: [{key: alice-key}]
    plugins: [{name: rate-limiting, config: {minute: 1}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	n := 0
	for range 4 {
		if sendKey(h, "/api/public/x", "alice-key", "192.0.2.1") == 200 {
			n++
		}
	}
	if n != 3 {
		t.Errorf("alice on /api/public, where Kong counts her address by the global plugin's 3 a minute: %d of 4 admitted, want 3", n)
	}
	if got := sendKey(h, "/api/x", "alice-key", "192.0.2.1"); got != 200 {
		t.Errorf("alice on /api, her plugin's first: %d, want 200", got)
	}
}
