package migrate_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// kongSent returns how many of n requests of method from addr to host and
// path h admits.
func kongSent(h http.Handler, method, host, path, addr string, n int) int {
	ok := 0
	for range n {
		r := httptest.NewRequest(method, path, nil)
		r.Host, r.RemoteAddr = host, addr+":1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusOK {
			ok++
		}
	}
	return ok
}

// kongSend is a batch of n requests of one method, host and path, and how
// many of them Kong admits.
type kongSend struct {
	method, host, path string
	n, want            int
}

// TestImportedKongLeavesOutANarrowerRouteByHostAndMethod: Kong's router
// gives a request to the route that matches by more of it (hosts,
// methods), whatever the order of the file and the paths' lengths, and
// runs only that route's rate-limiting plugin (or none). The broader
// plugin's rule leaves those requests out by an except entry of the
// narrower route's paths on its own hosts and methods: on the other hosts
// and methods, the broader plugin still counts them.
func TestImportedKongLeavesOutANarrowerRouteByHostAndMethod(t *testing.T) {
	for _, c := range []struct {
		name, file string
		sends      []kongSend
		// gone is a text no difference may say any more.
		gone string
	}{
		{"a route of a host before one of any host, each of its own plugin", `routes:
- {name: rb, hosts: [a.example], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
`, []kongSend{{"GET", "a.example", "/orders", 8, 5}, {"GET", "b.example", "/orders", 8, 3}}, "also matches this plugin's paths on hosts or methods other than its routes'"},
		{"a route of a method, of its own plugin", `routes:
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, methods: [POST], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
`, []kongSend{{"POST", "a.example", "/orders", 8, 5}, {"GET", "a.example", "/orders", 8, 3}}, "also matches this plugin's paths on hosts or methods other than its routes'"},
		{"a route of a host without a plugin, below a catch-all", `routes:
- {name: ra, paths: [/], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, hosts: [a.example], paths: [/orders]}
`, []kongSend{{"GET", "a.example", "/orders", 8, 8}, {"GET", "b.example", "/orders", 8, 3}}, "a rule cannot leave out a path on some hosts, methods or headers only"},
		{"a route of GET without a plugin, below a catch-all", `routes:
- {name: ra, paths: [/], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, methods: [GET], paths: [/orders]}
`, []kongSend{{"GET", "a.example", "/orders/1", 8, 8}, {"POST", "a.example", "/orders/1", 8, 3}}, "a rule cannot leave out a path on some hosts, methods or headers only"},
		{"a route of a host above the plugin's path", `routes:
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, hosts: [a.example], paths: [/]}
`, []kongSend{{"GET", "a.example", "/orders", 8, 8}, {"GET", "b.example", "/orders", 8, 3}}, "a rule cannot leave out a path on some hosts or methods only"},
		{"a plugin's route of a host above another plugin's path", `routes:
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, hosts: [a.example], paths: [/], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
`, []kongSend{{"GET", "a.example", "/orders", 8, 5}, {"GET", "b.example", "/orders", 8, 3}, {"GET", "a.example", "/x", 8, 5}}, "sluice's rules of both match it, and both count it"},
		{"a route of a host with its own plugin under a global plugin", `plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]
routes:
- {name: rb, hosts: [a.example], paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
- {name: web, paths: [/]}
`, []kongSend{{"GET", "a.example", "/orders", 8, 5}, {"GET", "b.example", "/orders", 8, 3}, {"GET", "a.example", "/x", 8, 3}}, "also matches this plugin's paths on hosts or methods other than its routes'"},
		{"a service's route of a host above another plugin's path", `services:
- name: s
  plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]
  routes: [{name: rb, hosts: [a.example], paths: [/]}]
routes:
- {name: ra, paths: [/orders], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
`, []kongSend{{"GET", "a.example", "/orders", 8, 5}, {"GET", "b.example", "/orders", 8, 3}, {"GET", "a.example", "/x", 8, 5}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := migrate.Import("kong", "_format_version: \"3.0\"\n"+c.file, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			load(t, tr, true)
			h := serveImported(t, tr)
			for i, s := range c.sends {
				if n := kongSent(h, s.method, s.host, s.path, fmt.Sprintf("192.0.2.%d", i+1), s.n); n != s.want {
					t.Errorf("%s %s%s: %d of %d admitted, want %d", s.method, s.host, s.path, n, s.n, s.want)
				}
			}
			if c.gone != "" && slices.ContainsFunc(tr.Differences, func(d migrate.Difference) bool { return !d.Same && strings.Contains(d.Text, c.gone) }) {
				t.Errorf("a difference still says %q: %+v", c.gone, tr.Differences)
			}
		})
	}
}

// TestImportedKongKeepsARouteOfHeadersReported: Kong's route headers match
// any of their listed values in any case (x-version: [v1] takes "V1"), and
// a value written ~* as a regular expression; a rule's header match, and
// an except entry's, match one value in one case. So a route of headers
// under a catch-all stays the catch-all's (3 a minute), a plugin's route
// of headers has a rule of its paths alone, and the report says why.
func TestImportedKongKeepsARouteOfHeadersReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
routes:
- {name: ra, paths: [/], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
- {name: rb, paths: [/orders], headers: {x-version: [v1]}}
- {name: rc, paths: [/c], headers: {x-version: [v1]}, plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	if n := kongSent(serveImported(t, tr), "GET", "a.example", "/orders", "192.0.2.1", 5); n != 3 {
		t.Errorf("a.example/orders: %d of 5 admitted, want the catch-all's 3", n)
	}
	if !reported(tr, "cannot leave out a path on some hosts, methods or headers only") {
		t.Errorf("route rb's headers, which the rule cannot leave out, are not reported: %+v", tr.Differences)
	}
	if !reported(tr, "Kong matches a header's listed values in any case") {
		t.Errorf("why route rc's rule does not match its headers is not said: %+v", tr.Differences)
	}
}

// TestImportKongPathOfAnAsterisk: Kong matches route path /a*000 as a
// string prefix, "*" and all; sluice refuses a pattern of a segment with
// "*" (a glob ServeMux would match as written), so the imported
// configuration did not load. The path is not limited, and reported.
func TestImportKongPathOfAnAsterisk(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
routes: [{name: r, paths: [/a*000, /b], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	if !reported(tr, "a path with * cannot be a sluice pattern") {
		t.Errorf("route path /a*000, not limited, is not reported: %+v", tr.Differences)
	}
}
