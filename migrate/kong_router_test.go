package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongRouteNamesItsServiceByID: decK lets a top-level route
// name its service by id ("service: {id: …}"); Kong runs the service's
// plugin on it, in place of the global one. The route must be that
// service's, under its plugin: one a minute on /orders, not the global 5.
func TestImportedKongRouteNamesItsServiceByID(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - {name: rate-limiting, config: {minute: 5, limit_by: ip}}
services:
  - name: orders
    id: 0f2a4c56-1111-4222-8333-944455556666
    url: http://orders.internal
    plugins:
      - {name: rate-limiting, config: {minute: 1, limit_by: ip}}
routes:
  - name: orders
    paths: [/orders]
    service: {id: 0f2a4c56-1111-4222-8333-944455556666}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/orders", "", "192.0.2.1", 200},
		{"/orders", "", "192.0.2.1", 429}, // the service's plugin: one a minute
	})
}

// TestImportKongFormat11RegexPathIsARegularExpression: in a decK file of
// _format_version "1.1" (Kong 2.x) a route path of characters other than
// letters, digits and . - _ ~ / % is a regular expression, without the "~"
// Kong 3.0 asks for (decK's file convert adds it). The import must read
// /users/\d+/orders so: reported as a regular expression a rule cannot
// match, not written as the literal prefix of a path no request has. The
// same path in a 3.0 file stays a prefix.
func TestImportKongFormat11RegexPathIsARegularExpression(t *testing.T) {
	const file = `
services:
  - name: users
    url: http://users.internal
    routes:
      - name: orders
        paths: ['/users/\d+/orders']
        plugins:
          - {name: rate-limiting, config: {minute: 1, limit_by: ip}}
`
	for _, c := range []struct {
		version string
		regex   bool
	}{{"1.1", true}, {"3.0", false}} {
		tr, err := migrate.Import("kong", `_format_version: "`+c.version+`"`+file, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		regex := false
		for _, d := range tr.Differences {
			if !d.Same && strings.Contains(d.Where+d.Text, `\d`) && strings.Contains(d.Text, "regular-expression path") {
				regex = true
			}
		}
		_, prefix := tr.Costs[`/users/\d+/orders/`]
		if regex != c.regex || prefix == c.regex {
			t.Errorf("_format_version %s: reported as a regular expression %v, a prefix cost %v; want %v, %v", c.version, regex, prefix, c.regex, !c.regex)
			for _, d := range tr.Differences {
				t.Logf("%v %s: %s", d.Same, d.Where, d.Text)
			}
		}
	}
}

// TestImportedKongRoutesOfDifferentSNIsAreNoTie: Kong's router matches a
// route's snis (the TLS server name), so two routes that differ by their
// snis alone take different requests, no tie. The import must match each
// route's snis (as hosts, the Host header standing for the server name,
// reported): a.example gets route a's one a minute, b.example route b's 5.
func TestImportedKongRoutesOfDifferentSNIsAreNoTie(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
services:
  - name: a
    url: http://a.internal
    routes:
      - name: a
        snis: [a.example]
        protocols: [https]
        plugins: [{name: rate-limiting, config: {minute: 1, limit_by: ip}}]
  - name: b
    url: http://b.internal
    routes:
      - name: b
        snis: [b.example]
        protocols: [https]
        plugins: [{name: rate-limiting, config: {minute: 5, limit_by: ip}}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	send := func(host string) int {
		r := httptest.NewRequest("GET", "https://"+host+"/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if a, b := send("a.example"), send("a.example"); a != 200 || b != 429 {
		t.Errorf("a.example twice: %d, %d; want 200, 429 (route a's one a minute)", a, b)
	}
	if b := send("b.example"); b != 200 {
		t.Errorf("b.example after a.example's two: %d, want 200 (route b's 5)", b)
	}
	sni, tie := false, false
	for _, d := range tr.Differences {
		sni = sni || !d.Same && strings.Contains(d.Text, "server name")
		tie = tie || strings.Contains(d.Text, "undefined")
	}
	if !sni || tie {
		t.Errorf("the report says the snis are matched as hosts: %v (want true), calls the routes a tie: %v (want false)", sni, tie)
	}
}
