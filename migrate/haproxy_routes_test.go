package migrate_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// haproxyTwoRoutes sends /a/ and /b/ to backend api, whose table counts
// each address's requests whichever use_backend sent them, and refuses
// above 2 a minute; other paths go to backend app, unlimited.
const haproxyTwoRoutes = `frontend fe
    bind %[1]s
    use_backend api if { path_beg /a/ }
    use_backend api if { path_beg /b/ }
    default_backend app
backend api
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }
    server up %[2]s
backend app
    server up %[2]s
`

// TestImportHAProxyBackendOfTwoRoutesIsOneRule: a backend that two
// use_backend lines send requests to counts them in one table, so its
// refusal is one rule with an alternative per route, one count.
func TestImportHAProxyBackendOfTwoRoutesIsOneRule(t *testing.T) {
	tr, err := migrate.HAProxy(fmt.Sprintf(haproxyTwoRoutes, "127.0.0.1:8080", "127.0.0.1:9090"), "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	expectRequests(t, serveImported(t, tr), []request{
		{"GET", "example.com", "/a/x", "192.0.2.1", 200},
		{"GET", "example.com", "/b/x", "192.0.2.1", 200},
		{"GET", "example.com", "/a/y", "192.0.2.1", 429}, // the third of the address in backend api's table
		{"GET", "example.com", "/b/y", "192.0.2.1", 429},
		{"GET", "example.com", "/c/x", "192.0.2.1", 200}, // backend app's
		{"GET", "example.com", "/a/x", "192.0.2.2", 200},
	})
	if len(tr.SluiceRules) != 1 {
		t.Errorf("%d rules, want 1: %+v", len(tr.SluiceRules), tr.SluiceRules)
	}
}

// TestHAProxyBackendOfTwoRoutesAgrees holds the import of a backend of two
// routes to Debian's haproxy: one count of an address across both.
func TestHAProxyBackendOfTwoRoutesAgrees(t *testing.T) {
	t.Parallel()
	targets := startHAProxyTargets(t, haproxyTwoRoutes, okUpstream(t))
	seq := []haproxyRequest{
		{2, "GET", "/a/x", ""}, {2, "GET", "/b/x", ""}, {2, "GET", "/a/y", ""}, {2, "GET", "/c/x", ""},
		{3, "GET", "/b/x", ""}, {3, "GET", "/b/y", ""}, {3, "GET", "/a/x", ""},
	}
	want := []int{200, 200, 429, 200,
		200, 200, 429}
	expectSameStatuses(t, targets, seq, want)
}
