package migrate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// sendKeyTo sends GET path to host on h from address addr, with the API
// key key in Apikey (none when ""), and returns the status.
func sendKeyTo(h http.Handler, host, path, key, addr string) int {
	r := httptest.NewRequest("GET", path, nil)
	r.Host = host
	r.RemoteAddr = addr + ":1234"
	if key != "" {
		r.Header.Set("Apikey", key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// admitted returns how many of n requests of key from addr to host and
// path h admits.
func admitted(h http.Handler, host, path, key, addr string, n int) int {
	ok := 0
	for range n {
		if sendKeyTo(h, host, path, key, addr) == 200 {
			ok++
		}
	}
	return ok
}

// TestImportedKongConsumerRuleMatchesEachRoutesOwnHost: key-auth runs on
// services a (host a.example, path /orders) and b (host b.example, path
// /billing), not on web (any host, path /). Kong runs consumer alice's
// plugin (2 a minute) on the routes of a and b alone: a request to
// a.example for /billing is web's, where no consumer is named and web's
// plugin (100 a minute) counts the address. The consumer's rules match each route's own
// host and path, not any of the hosts on any of the paths.
func TestImportedKongConsumerRuleMatchesEachRoutesOwnHost(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: a
  plugins: [{name: key-auth}]
  routes: [{name: a, hosts: [a.example], paths: [/orders]}]
- name: b
  plugins: [{name: key-auth}]
  routes: [{name: b, hosts: [b.example], paths: [/billing]}]
- name: web
  plugins: [{name: rate-limiting, config: {minute: 100}}]
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 2}}]
- username: carol
  keyauth_credentials: [{key: carol-key}]
  plugins: [{name: rate-limiting, config: {minute: 2}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	for _, c := range []struct {
		host, path, key string
		n, want         int
		kong            string
	}{
		{"a.example", "/billing", "alice-key", 4, 4, "route web's, where web's plugin counts her address (100 a minute)"},
		{"b.example", "/orders", "alice-key", 4, 4, "route web's, where web's plugin counts her address (100 a minute)"},
		{"a.example", "/orders", "alice-key", 3, 2, "route a's, where her plugin runs (2 a minute)"},
		{"b.example", "/billing", "carol-key", 3, 2, "route b's, where her plugin runs (2 a minute)"},
	} {
		if n := admitted(h, c.host, c.path, c.key, "192.0.2.1", c.n); n != c.want {
			t.Errorf("%s to %s%s, %s: %d of %d admitted, want %d", c.key, c.host, c.path, c.kong, n, c.n, c.want)
		}
	}
}

// TestImportedKongConsumerRuleOfOneHostSetIsOne: routes that share their
// hosts keep one rule, and so the consumer's one count on them all, as
// Kong counts it; so do routes whose hosts and paths cross exactly (each
// host on each path is a route's).
func TestImportedKongConsumerRuleOfOneHostSetIsOne(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: a
  plugins: [{name: key-auth}]
  routes:
  - {name: a1, hosts: [a.example], paths: [/orders]}
  - {name: a2, hosts: [a.example], paths: [/billing]}
  - {name: b1, hosts: [b.example], paths: [/orders]}
  - {name: b2, hosts: [b.example], paths: [/billing]}
- name: web
  plugins: [{name: rate-limiting, config: {minute: 100}}]
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 3}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	n := admitted(h, "a.example", "/orders", "alice-key", "192.0.2.1", 2) + admitted(h, "b.example", "/billing", "alice-key", "192.0.2.1", 2)
	if n != 3 {
		t.Errorf("alice on a.example/orders and b.example/billing, one count in Kong (3 a minute): %d of 4 admitted, want 3", n)
	}
	if hasDifference(tr, false, "counts apart") {
		t.Errorf("the report says the routes count apart: %+v", tr.Differences)
	}
}

// TestImportedKongConsumerRuleAcrossHostsCountsOnce: a consumer's plugin
// over routes whose hosts and paths do not cross (a.example/orders,
// b.example/billing) counts the consumer once across them, as Kong does:
// one rule with an alternative per group of routes, which a.example/billing
// (web's route) is not.
func TestImportedKongConsumerRuleAcrossHostsCountsOnce(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
- name: a
  plugins: [{name: key-auth}]
  routes: [{name: a, hosts: [a.example], paths: [/orders]}]
- name: b
  plugins: [{name: key-auth}]
  routes: [{name: b, hosts: [b.example], paths: [/billing]}]
- name: web
  plugins: [{name: rate-limiting, config: {minute: 100}}]
  routes: [{name: web, paths: [/]}]
consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 3}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	n := admitted(h, "a.example", "/orders", "alice-key", "192.0.2.1", 2) + admitted(h, "b.example", "/billing", "alice-key", "192.0.2.1", 2)
	if n != 3 {
		t.Errorf("alice on a.example/orders and b.example/billing, one count in Kong (3 a minute): %d of 4 admitted, want 3", n)
	}
	if n := admitted(h, "a.example", "/billing", "alice-key", "192.0.2.1", 2); n != 2 {
		t.Errorf("alice on a.example/billing, web's route (100 a minute by address): %d of 2 admitted, want 2", n)
	}
	if hasDifference(tr, false, "counts apart") || hasDifference(tr, false, "count apart") {
		t.Errorf("the report says the routes count apart: %+v", tr.Differences)
	}
}
