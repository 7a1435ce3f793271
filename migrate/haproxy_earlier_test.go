package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// use_backend lines are tried in order, the first whose condition holds
// wins: /api/v2/ goes to backend v2 (no limit), the rest of /api/ to
// backend api (1 a minute per address). Backend api's rule leaves out
// the earlier use_backend's /api/v2/ (except:), which HAProxy never
// limits.
func TestHAProxyEarlierUseBackendTakesItsRequests(t *testing.T) {
	const site = `frontend fe
    bind %[1]s
    use_backend v2 if { path_beg /api/v2/ }
    use_backend api if { path_beg /api/ }
    default_backend app
backend api
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1 }
    server up %[2]s
backend v2
    server up %[2]s
backend app
    server up %[2]s
`
	targets := startHAProxyTargets(t, site, okUpstream(t))
	seq := []haproxyRequest{{2, "GET", "/api/v2/x", ""}, {2, "GET", "/api/v2/x", ""}, {2, "GET", "/api/v2/x", ""}, {3, "GET", "/api/x", ""}, {3, "GET", "/api/x", ""}}
	expectSameStatuses(t, targets, seq, []int{200, 200, 200, 200, 429})
}

// default_backend takes the requests no use_backend sends elsewhere: the
// default backend's rule leaves out those of every use_backend to another
// backend, wherever it is written.
func TestHAProxyDefaultBackendLeavesOutTheOtherRoutes(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    default_backend api
    use_backend v2 if { path_beg /v2/ }
backend api
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1 }
    server s 127.0.0.1:9000
backend v2
    server s 127.0.0.1:9000
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	got := statusesOf(h, []string{"GET", "/v2/x"}, []string{"GET", "/v2/x"}, []string{"GET", "/x"}, []string{"GET", "/x"})
	if want := []int{200, 200, 200, 429}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("GET /v2/x, /v2/x, /x, /x: %v, want %v (backend v2 takes /v2/, unlimited)", got, want)
	}
}
