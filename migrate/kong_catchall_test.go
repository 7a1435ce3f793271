package migrate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kongHealthAndWeb is a decK file of two services: health (route /health)
// without a plugin, and web, the catch-all (route /); plugins says where
// the file's rate-limiting plugins are.
func kongHealthAndWeb(global, web, route string) string {
	return `_format_version: "3.0"
` + global + `services:
- name: health
  routes: [{name: health, paths: [/health]}]
- name: web
` + web + `  routes:
  - name: web
    paths: [/]
` + route
}

// TestImportedKongGlobalPluginLimitsAPluginlessRoute: Kong runs a global
// plugin on every route, a route of a service without a plugin too, and
// counts its requests on every route together (the counter names the
// plugin's service and route, none for a global plugin). /health is
// limited with the catch-all's paths: 3 a minute by address across both.
func TestImportedKongGlobalPluginLimitsAPluginlessRoute(t *testing.T) {
	tr, err := migrate.Import("kong", kongHealthAndWeb("plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\n", "", ""), "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/health", "", "192.0.2.1", 5); n != 3 {
		t.Errorf("/health, where Kong runs the global plugin (3 a minute): %d of 5 admitted, want 3", n)
	}
	if n := admitted(h, "a.example", "/shop", "", "192.0.2.1", 2); n != 0 {
		t.Errorf("/shop after /health spent the address's 3: %d of 2 admitted, want 0", n)
	}
	if n := admitted(h, "a.example", "/shop", "", "192.0.2.2", 5); n != 3 {
		t.Errorf("/shop from another address: %d of 5 admitted, want 3", n)
	}
}

// TestImportedKongCatchAllPluginLeavesOutAPluginlessRoute: a plugin on the
// catch-all service web, or on its route / (3 a minute by address), runs
// in Kong on the requests its router gives route web alone. GET /health
// (and what lies below it) goes to route health, the longer prefix, of a
// service without a plugin: Kong limits it not at all, whatever web's
// count. web's other paths are limited at 3.
func TestImportedKongCatchAllPluginLeavesOutAPluginlessRoute(t *testing.T) {
	const plugin = "    plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\n"
	for name, src := range map[string]string{
		"on the service": kongHealthAndWeb("", "  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]\n", ""),
		"on the route":   kongHealthAndWeb("", "", plugin),
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("kong", src, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			h := serveImported(t, tr)
			if n := admitted(h, "a.example", "/health", "", "192.0.2.1", 6); n != 6 {
				t.Errorf("/health, route health's, where Kong runs no rate-limiting plugin: %d of 6 admitted, want 6", n)
			}
			if n := admitted(h, "a.example", "/health/live", "", "192.0.2.1", 2); n != 2 {
				t.Errorf("/health/live, below route health's prefix: %d of 2 admitted, want 2", n)
			}
			if n := admitted(h, "a.example", "/shop", "", "192.0.2.1", 5); n != 3 {
				t.Errorf("/shop, route web's (3 a minute): %d of 5 admitted, want 3", n)
			}
			if n := admitted(h, "a.example", "/healthy", "", "192.0.2.2", 5); n != 5 && !reported(tr, "also takes /healthx") {
				t.Errorf("/healthy, which Kong's string prefix /health takes too: %d of 5 admitted, want 5 or a report", n)
			}
			if n := admitted(h, "a.example", "/health", "", "192.0.2.1", 2); n != 2 {
				t.Errorf("/health after web's count is spent: %d of 2 admitted, want 2", n)
			}
		})
	}
}

// TestImportedKongCatchAllLeavesOutOnlyTheNarrowRoutesHost: route health
// names host b.example. Kong's router gives a.example/health to web (route
// health does not match that host), so web's plugin limits it; b.example/health
// goes to route health, unlimited: web's rule leaves /health out on
// b.example alone (an except entry), and the translation says so, and that
// /health is a string prefix in Kong (b.example/healthx is health's too,
// which the entry does not leave out).
func TestImportedKongCatchAllLeavesOutOnlyTheNarrowRoutesHost(t *testing.T) {
	src := `_format_version: "3.0"
services:
- name: health
  routes: [{name: health, hosts: [b.example], paths: [/health]}]
- name: web
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
  routes: [{name: web, paths: [/]}]
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/health", "", "192.0.2.1", 5); n != 3 {
		t.Errorf("a.example/health, route web's (3 a minute): %d of 5 admitted, want 3", n)
	}
	if n := admitted(h, "b.example", "/health", "", "192.0.2.2", 5); n != 5 {
		t.Errorf("b.example/health, route health's (no plugin): %d of 5 admitted, want 5", n)
	}
	if !slices.ContainsFunc(tr.Differences, func(d migrate.Difference) bool {
		return d.Same && strings.Contains(d.Text, "route health the requests on /health /health/ of its own hosts and methods")
	}) {
		t.Errorf("web's rule leaving out b.example/health is not said: %+v", tr.Differences)
	}
	if !reported(tr, "route health's path /health is a string prefix") {
		t.Errorf("b.example/healthx, which web's rule still counts, is not reported: %+v", tr.Differences)
	}
}

// TestImportedKongConsumerPluginLimitsAPluginlessRoute: a plugin on
// consumer alice alone (2 a minute) runs in Kong on every route where
// key-auth names her, route health's too, in place of web's (3 a minute);
// bob, without one, is not limited on /health.
func TestImportedKongConsumerPluginLimitsAPluginlessRoute(t *testing.T) {
	src := kongHealthAndWeb("plugins: [{name: key-auth}]\n", "  plugins: [{name: rate-limiting, config: {minute: 3}}]\n", "") + `consumers:
- username: alice
  keyauth_credentials: [{key: alice-key}]
  plugins: [{name: rate-limiting, config: {minute: 2}}]
- username: bob
  keyauth_credentials: [{key: bob-key}]
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/health", "alice-key", "192.0.2.1", 4); n != 2 {
		t.Errorf("alice on /health, where Kong runs her plugin (2 a minute): %d of 4 admitted, want 2", n)
	}
	if n := admitted(h, "a.example", "/health", "bob-key", "192.0.2.2", 5); n != 5 {
		t.Errorf("bob on /health, where Kong runs no rate-limiting plugin: %d of 5 admitted, want 5", n)
	}
	if n := admitted(h, "a.example", "/shop", "bob-key", "192.0.2.2", 5); n != 3 {
		t.Errorf("bob on /shop, where Kong runs web's plugin (3 a minute): %d of 5 admitted, want 3", n)
	}
}

// TestImportedKongCatchAllRoutesOfOtherHostsAndMethods: Kong's router
// prefers the route that matches by more of a request (its hosts, its
// methods), then a regular expression, then the longer prefix. Service
// web's plugin (route /, 3 a minute by address) runs on what its router
// gives route web:
//   - ~/status$ (route status, no plugin) takes /status alone, before
//     the prefixes: unlimited; /status/x is web's;
//   - /health on b.example only (route health) takes b.example/health;
//     a.example/health is web's, limited (the rule leaves the path out on
//     b.example alone, by an except entry);
//   - GET /admin (route admin, no plugin) takes GET /admin; POST /admin
//     is web's (an except entry of GET /admin);
//   - route shop of host c.example, path /, matches by more of a request
//     than web: Kong gives it every c.example request (an except entry of
//     host c.example).
func TestImportedKongCatchAllRoutesOfOtherHostsAndMethods(t *testing.T) {
	src := `_format_version: "3.0"
services:
- name: other
  routes:
  - {name: status, paths: ["~/status$"]}
  - {name: health, hosts: [b.example], paths: [/health]}
  - {name: admin, methods: [GET], paths: [/admin]}
  - {name: shop, hosts: [c.example]}
- name: web
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
  routes: [{name: web, paths: [/]}]
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/status", "", "192.0.2.1", 5); n != 5 {
		t.Errorf("/status, route status's (~/status$), where Kong runs no rate-limiting plugin: %d of 5 admitted, want 5", n)
	}
	if n := admitted(h, "a.example", "/status/x", "", "192.0.2.1", 5); n != 3 {
		t.Errorf("/status/x, which ~/status$ does not match: route web's, %d of 5 admitted, want 3", n)
	}
	if n := admitted(h, "a.example", "/health", "", "192.0.2.2", 5); n != 3 {
		t.Errorf("a.example/health, route web's (health matches b.example only): %d of 5 admitted, want 3", n)
	}
	for _, c := range []struct {
		method, host, path string
		want               int
	}{
		{"GET", "b.example", "/health", 5},
		{"GET", "a.example", "/admin", 5},
		{"POST", "a.example", "/admin", 3},
		{"GET", "c.example", "/shop", 5},
	} {
		if n := kongSent(h, c.method, c.host, c.path, "192.0.2.3", 5); n != c.want {
			t.Errorf("%s %s%s: %d of 5 admitted, want %d", c.method, c.host, c.path, n, c.want)
		}
	}
	for _, phrase := range []string{"3 routes, health (/health /health/), admin (/admin /admin/) and shop (/) the requests on its paths of its own hosts and methods"} {
		if !slices.ContainsFunc(tr.Differences, func(d migrate.Difference) bool { return d.Same && strings.Contains(d.Text, phrase) }) {
			t.Errorf("no report with %q: %+v", phrase, tr.Differences)
		}
	}
}

// TestImportedKongHostCatchAllKeepsAnyHostsNarrowerRoute: route web (host
// a.example, path /, its service's plugin 3 a minute by address) matches
// by more of a request than route health (any host, /health, no plugin),
// so Kong's router gives a.example/health to web: limited. A route of the
// same host and a longer path (b.example: web2 on /, health2 on /health)
// takes its path from the catch-all: unlimited.
func TestImportedKongHostCatchAllKeepsAnyHostsNarrowerRoute(t *testing.T) {
	src := `_format_version: "3.0"
services:
- name: health
  routes:
  - {name: health, paths: [/health]}
  - {name: health2, hosts: [b.example], paths: [/health]}
- name: web
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
  routes:
  - {name: web, hosts: [a.example], paths: [/]}
  - {name: web2, hosts: [b.example], paths: [/]}
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	if n := admitted(h, "a.example", "/health", "", "192.0.2.1", 5); n != 3 {
		t.Errorf("a.example/health, route web's (more attributes than health): %d of 5 admitted, want 3", n)
	}
	if n := admitted(h, "b.example", "/health", "", "192.0.2.2", 5); n != 5 {
		t.Errorf("b.example/health, route health2's (same host, longer path), no plugin: %d of 5 admitted, want 5", n)
	}
	if n := admitted(h, "b.example", "/shop", "", "192.0.2.2", 5); n != 3 {
		t.Errorf("b.example/shop, route web2's: %d of 5 admitted, want 3", n)
	}
}

// TestImportedKongCatchAllOfMethodsKeepsAnotherMethod: route web (GET and
// POST on /, its service's plugin 3 a minute by address) and route admin
// (GET /admin, no plugin) match by as many attributes, so Kong's router
// gives GET /admin to admin, the longer path: unlimited; POST /admin is
// web's, limited.
func TestImportedKongCatchAllOfMethodsKeepsAnotherMethod(t *testing.T) {
	src := `_format_version: "3.0"
services:
- name: admin
  routes: [{name: admin, methods: [GET], paths: [/admin]}]
- name: web
  plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
  routes: [{name: web, methods: [GET, POST], paths: [/]}]
`
	tr, err := migrate.Import("kong", src, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "a.example", "/admin", "192.0.2.1", 200}, // admin's
		{"GET", "a.example", "/admin", "192.0.2.1", 200},
		{"GET", "a.example", "/admin/x", "192.0.2.1", 200},
		{"GET", "a.example", "/admin", "192.0.2.1", 200},
		{"POST", "a.example", "/admin", "192.0.2.1", 200}, // web's
		{"POST", "a.example", "/admin", "192.0.2.1", 200},
		{"GET", "a.example", "/shop", "192.0.2.1", 200},
		{"POST", "a.example", "/admin", "192.0.2.1", 429}, // 3 a minute
		{"GET", "a.example", "/admin", "192.0.2.1", 200},
	})
}
