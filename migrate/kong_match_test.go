package migrate_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// request is one request a test sends: its method, host, path and client
// address, and the status it must get.
type request struct {
	method, host, path, from string
	want                     int
}

// expectRequests sends each request to h in turn and checks its status.
func expectRequests(t *testing.T, h http.Handler, reqs []request) {
	t.Helper()
	for i, c := range reqs {
		r := httptest.NewRequest(c.method, "http://"+c.host+c.path, nil)
		r.RemoteAddr = c.from + ":1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d, %s %s%s from %s: %d, want %d (RateLimit: %s)", i, c.method, c.host, c.path, c.from, w.Code, c.want, w.Header().Get("RateLimit"))
		}
	}
}

// reported reports whether some difference of tr (not the same) contains
// phrase.
func reported(tr *migrate.Translation, phrase string) bool {
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, phrase) {
			return true
		}
	}
	return false
}

// TestImportedKongGlobalPluginLimitsEachService: a global plugin with
// limit_by service counts each service apart (Kong's identifier is the
// matched route's service), all of a service's routes together; a route
// or service with a rate-limiting plugin of its own runs that one instead,
// and a request no route matches is not Kong's to count.
func TestImportedKongGlobalPluginLimitsEachService(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 2, limit_by: service}
services:
  - name: a
    routes:
      - {name: a1, paths: [/a1]}
      - {name: a2, paths: [/a2]}
  - name: b
    routes:
      - {name: b1, paths: [/b]}
      - {name: own, paths: [/own], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
  - name: c
    plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]
    routes:
      - {name: c1, paths: [/c]}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a1", "", "192.0.2.1", 200},
		{"/a2", "", "192.0.2.2", 200}, // service a's routes count together, whoever sends
		{"/a1", "", "192.0.2.3", 429}, // service a's minute is spent
		{"/b", "", "192.0.2.1", 200},  // service b has a count of its own
		{"/b", "", "192.0.2.2", 200},
		{"/b", "", "192.0.2.3", 429},
		{"/own", "", "192.0.2.1", 200}, // the route's plugin alone: service b's spent minute does not apply
		{"/own", "", "192.0.2.1", 429},
		{"/own", "", "192.0.2.2", 200},
		{"/c", "", "192.0.2.1", 200}, // service c's own plugin: 5 per address
		{"/c", "", "192.0.2.1", 200},
		{"/c", "", "192.0.2.1", 200},
		{"/other", "", "192.0.2.1", 200}, // no route: Kong answers 404 without counting
		{"/other", "", "192.0.2.1", 200},
	})
}

// TestImportKongGlobalServicePluginWithoutServices: a global plugin with
// limit_by service in a file that names no service cannot be counted per
// service: the import says so.
func TestImportKongGlobalServicePluginWithoutServices(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 2, limit_by: service}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "per service") {
		t.Errorf("no difference reports that Kong counted per service: %+v", tr.Differences)
	}
}

// TestImportedKongRouteHostsAndMethods: a Kong route matches only the hosts
// and methods it lists (a route of hosts alone: every path of those hosts),
// so its plugin limits only those requests.
func TestImportedKongRouteHostsAndMethods(t *testing.T) {
	t.Run("one plugin, on a route of hosts alone", func(t *testing.T) {
		tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - {name: site, hosts: [shop.example.com], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
`, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		expectRequests(t, serveImported(t, tr), []request{
			{"GET", "shop.example.com", "/x", "192.0.2.1", 200},
			{"GET", "shop.example.com", "/y", "192.0.2.1", 429},  // every path of the host
			{"GET", "other.example.com", "/x", "192.0.2.1", 200}, // another host: not the route's
			{"GET", "other.example.com", "/x", "192.0.2.1", 200},
		})
	})
	t.Run("plugins on routes of hosts, of methods, of a wildcard host", func(t *testing.T) {
		tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - {name: site, hosts: [shop.example.com], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
      - {name: writes, paths: [/orders], methods: [POST, PUT], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
      - {name: tenants, hosts: ["*.tenant.example.com"], plugins: [{name: rate-limiting, config: {hour: 1, limit_by: ip}}]}
`, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		expectRequests(t, serveImported(t, tr), []request{
			{"GET", "shop.example.com", "/x", "192.0.2.1", 200},
			{"GET", "shop.example.com", "/y", "192.0.2.1", 429},
			{"GET", "other.example.com", "/x", "192.0.2.1", 200},
			{"GET", "other.example.com", "/x", "192.0.2.1", 200},
			{"POST", "other.example.com", "/orders", "192.0.2.2", 200},
			{"PUT", "other.example.com", "/orders", "192.0.2.2", 429}, // one count for the route's methods
			{"GET", "other.example.com", "/orders", "192.0.2.2", 200}, // another method: not the route's
			{"GET", "other.example.com", "/orders", "192.0.2.2", 200},
			{"GET", "a.tenant.example.com", "/", "192.0.2.3", 200},
			{"GET", "b.c.tenant.example.com", "/", "192.0.2.3", 429}, // Kong's leading wildcard: any name ending so
			{"GET", "tenant.example.com", "/", "192.0.2.3", 200},     // not the wildcard's
		})
	})
	t.Run("what rules cannot match is reported", func(t *testing.T) {
		tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: api
    routes:
      - {name: ported, hosts: ["shop.example.com:8443"], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
      - {name: suffix, hosts: ["shop.*"], plugins: [{name: rate-limiting, config: {minute: 2, limit_by: ip}}]}
      - {name: reads, paths: [/items], methods: [GET], plugins: [{name: rate-limiting, config: {minute: 3, limit_by: ip}}]}
`, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for _, phrase := range []string{"shop.example.com:8443", "shop.*", "HEAD"} {
			if !reported(tr, phrase) {
				t.Errorf("no difference mentions %q: %+v", phrase, tr.Differences)
			}
		}
	})
}

// TestImportKongRoutePathIsAStringPrefix: Kong matches a route path as a
// string prefix, so /api also takes /apix and /api-v2, which the rule's
// patterns (/api, /api/) do not match: the import says so for each path
// not ending in a slash, and not for one that does.
func TestImportKongRoutePathIsAStringPrefix(t *testing.T) {
	for _, several := range []bool{false, true} {
		src := `_format_version: "3.0"
services:
  - name: api
    routes:
      - {name: api, paths: [/api, /v2/], plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]}
`
		if several {
			src += "      - {name: other, paths: [/other/], plugins: [{name: rate-limiting, config: {minute: 2, limit_by: ip}}]}\n"
		}
		tr, err := migrate.Import("kong", src, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !reported(tr, "/apix") {
			t.Errorf("several plugins %v: no difference says that /api also matches /apix in Kong: %+v", several, tr.Differences)
		}
		if reported(tr, "/v2/x") {
			t.Errorf("several plugins %v: /v2/ is reported as a string prefix, though it matches what its pattern does: %+v", several, tr.Differences)
		}
	}
}

// TestImportKongIngressPrefixIsNotAStringPrefix: the Kong Ingress
// Controller writes a Prefix path as the path and the path with a slash,
// matched element by element as the rule's patterns are: not reported.
func TestImportKongIngressPrefixIsNotAStringPrefix(t *testing.T) {
	tr, err := migrate.Import("kong", kongK8s, "kic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if reported(tr, "/searchx") {
		t.Errorf("a Prefix path is reported as a string prefix: %+v", tr.Differences)
	}
}
