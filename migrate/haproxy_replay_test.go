package migrate_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/migrate"
)

// haproxySite limits, per minute: /api/ to 3 requests per address (the
// tracker counts /api/ only; 127.0.0.9 is allowlisted), /t/ to 2 per
// X-Tenant value (a table in a backend of its own), and POST /login to 1
// per address (a backend that tracks its own requests into a third table).
const haproxySite = `frontend fe
    bind %[1]s
    acl allowlist src 127.0.0.9
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src if { path_beg /api/ }
    http-request track-sc1 req.hdr(X-Tenant) table tenants if { path_beg /t/ }
    http-request deny deny_status 429 if !allowlist { sc_http_req_rate(0) gt 3 } { path_beg /api/ }
    http-request deny deny_status 429 if { sc_http_req_rate(1) gt 2 }
    use_backend login if { path /login }
    default_backend app
backend tenants
    stick-table type string len 64 size 10k expire 2m store http_req_rate(1m)
backend login
    http-request track-sc2 src table login_rates
    http-request deny deny_status 429 if { sc_http_req_rate(2,login_rates) gt 1 } METH_POST
    server up %[2]s
backend login_rates
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
backend app
    server up %[2]s
`

// TestHAProxyAgrees sends one sequence of requests, from several client
// addresses, to real HAProxy and to sluice serving the configuration `sluice
// import -from haproxy` wrote from the same file, and requires the same
// status for every request. Every request falls in one minute of sluice's
// windows and in the first period of HAProxy's counters, where the two
// estimates are plain counts; the sequence avoids the documented
// difference (HAProxy's counter counting requests a rule does not refuse)
// by sending GET /login from an address that never posts, and the other
// (sluice's rules count /login/ as /login, which the report says) by
// sending none. It runs in
// parallel with the other real-time comparisons: its HAProxy, sluice and
// upstream are its own.
func TestHAProxyAgrees(t *testing.T) {
	t.Parallel()
	targets := startHAProxyTargets(t, haproxySite, okUpstream(t))

	seq := []haproxyRequest{
		{2, "GET", "/api/a", ""}, {2, "GET", "/api/b", ""}, {2, "GET", "/api/a", ""}, {2, "GET", "/api/a", ""}, {2, "GET", "/api/c", ""},
		{2, "GET", "/apix", ""}, {2, "GET", "/other", ""},
		{9, "GET", "/api/a", ""}, {9, "GET", "/api/a", ""}, {9, "GET", "/api/a", ""}, {9, "GET", "/api/a", ""}, {9, "GET", "/api/a", ""},
		{3, "GET", "/t/x", "acme"}, {3, "GET", "/t/y", "acme"}, {3, "GET", "/t/x", "acme"}, {3, "GET", "/t/x", "other"}, {3, "GET", "/t/x", ""},
		{4, "GET", "/t/x", "acme"},
		{5, "GET", "/login", ""}, {5, "GET", "/login", ""}, {5, "GET", "/login", ""},
		{6, "POST", "/login", ""}, {6, "POST", "/login", ""}, {6, "GET", "/login", ""}, {6, "POST", "/loginx", ""},
	}
	want := []int{200, 200, 200, 429, 429,
		200, 200,
		200, 200, 200, 200, 200,
		200, 200, 429, 200, 200,
		429,
		200, 200, 200,
		200, 429, 200, 200}
	expectSameStatuses(t, targets, seq, want)
}

// haproxyRequest is a request of a sequence sent to HAProxy and sluice.
type haproxyRequest struct {
	from         byte // 127.0.0.from
	method, path string
	tenant       string // X-Tenant; "" for none
}

// expectSameStatuses sends seq to targets["haproxy"], then to
// targets["sluice"], within one of sluice's minutes, and requires HAProxy
// to answer want, and sluice as HAProxy does, request by request.
func expectSameStatuses(t *testing.T, targets map[string]string, seq []haproxyRequest, want []int) {
	t.Helper()
	// Both must count from the start of one of sluice's minutes: wait for
	// the next one when less than 20 s of this one are left.
	if left := time.Minute - time.Duration(time.Now().UnixNano())%time.Minute; left < 20*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	clients := map[byte]*http.Client{}
	for _, r := range seq {
		if clients[r.from] == nil {
			clients[r.from] = clientFrom(r.from, true)
		}
	}
	got := map[string][]int{}
	for _, name := range []string{"haproxy", "sluice"} {
		for _, r := range seq {
			req, _ := http.NewRequest(r.method, targets[name]+r.path, nil)
			if r.tenant != "" {
				req.Header.Set("X-Tenant", r.tenant)
			}
			resp, err := clients[r.from].Do(req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got[name] = append(got[name], resp.StatusCode)
		}
	}
	if !slices.Equal(got["haproxy"], want) {
		t.Fatalf("HAProxy answered\n%v, want\n%v: the test's idea of HAProxy is wrong", got["haproxy"], want)
	}
	if !slices.Equal(got["sluice"], got["haproxy"]) {
		for i, r := range seq {
			t.Logf("%d: 127.0.0.%d %s %s tenant %q: haproxy %d, sluice %d", i, r.from, r.method, r.path, r.tenant, got["haproxy"][i], got["sluice"][i])
		}
		t.Errorf("sluice and HAProxy differ:\nhaproxy %v\nsluice  %v", got["haproxy"], got["sluice"])
	}
}

// TestHAProxySlidingAgrees holds the import of http_req_rate across
// periods to Debian's haproxy: three clients spend 4 and 2 requests of a
// limit of 4 per 2 s at the start of one of sluice's windows, then send
// again 0.7 s into the next (the previous count weighs 0.65: ⌊4·0.65⌋ = 2
// and ⌊2·0.65⌋ = 1 are used) or 0.5 s into the one after (nothing is
// left of the first). Every request is at least 150 ms from a time at
// which a weighted count flips; the first reaches HAProxy within a few
// milliseconds of the boundary where sluice's window starts, so HAProxy's
// periods, which start at a client's first request, are sluice's windows.
// It runs in parallel with the other real-time comparisons: its HAProxy,
// sluice and upstream are its own, and a run that misses the schedule is
// run again.
func TestHAProxySlidingAgrees(t *testing.T) {
	t.Parallel()
	targetsByName := startHAProxyTargets(t, `frontend fe
    bind %[1]s
    stick-table type ipv6 size 10k expire 1m store http_req_rate(2s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 4 }
    default_backend app
backend app
    server up %[2]s
`, okUpstream(t))
	targets := []string{targetsByName["haproxy"], targetsByName["sluice"]}

	type phase struct {
		client int
		at     time.Duration // after the window's start
		n      int
		want   []int
	}
	phases := []phase{
		{0, 0, 4, []int{200, 200, 200, 200}},
		{1, 0, 2, []int{200, 200}},
		{2, 0, 4, []int{200, 200, 200, 200}},
		{0, 2700 * time.Millisecond, 3, []int{200, 200, 429}},
		{1, 2700 * time.Millisecond, 4, []int{200, 200, 200, 429}},
		{2, 4500 * time.Millisecond, 5, []int{200, 200, 200, 200, 429}},
	}
	const slack = 150 * time.Millisecond
	for attempt := 0; ; attempt++ {
		clients := make([]*http.Client, 3)
		for k := range clients {
			clients[k] = clientFrom(2+3*byte(attempt)+byte(k), true)
			for _, target := range targets { // connect before the clock starts
				if resp, err := clients[k].Head(target + "/warm"); err == nil {
					resp.Body.Close()
				}
			}
		}
		// The warm-up requests count too: wait for a window that starts
		// two windows after them, where HAProxy has forgotten them.
		start := time.Now().Truncate(2 * time.Second).Add(6 * time.Second)
		late := time.Duration(0)
		got := make([][][]int, len(targets))
		for i := range targets {
			got[i] = make([][]int, len(phases))
		}
		for p, ph := range phases {
			time.Sleep(time.Until(start.Add(ph.at)))
			late = max(late, time.Since(start.Add(ph.at)))
			for i, target := range targets {
				for range ph.n {
					resp, err := clients[ph.client].Get(target + "/x")
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					got[i][p] = append(got[i][p], resp.StatusCode)
				}
			}
		}
		if late > slack {
			if attempt == 2 {
				t.Fatalf("in 3 runs the machine never kept the schedule: a phase started up to %s late (at most %s keeps every decision clear of an edge)", late, slack)
			}
			t.Logf("run %d: a phase started %s late: running again with other clients", attempt+1, late)
			continue
		}
		for p, ph := range phases {
			if !slices.Equal(got[0][p], ph.want) {
				t.Errorf("HAProxy, client %d at +%s: %v, want %v (the test's idea of HAProxy is wrong)", ph.client, ph.at, got[0][p], ph.want)
			}
			if !slices.Equal(got[1][p], got[0][p]) {
				t.Errorf("client %d at +%s: HAProxy %v, sluice %v", ph.client, ph.at, got[0][p], got[1][p])
			}
		}
		return
	}
}

// TestHAProxyConnAgrees holds the import of conn_cur to Debian's haproxy:
// with two requests of one address held by the upstream (each on its own
// connection, as a client without keep-alive sends them), a third on the
// limited path is refused by both, one from another address passes, and
// once the two end, the next passes again.
func TestHAProxyConnAgrees(t *testing.T) {
	up := newHeldUpstream(t)
	targets := startHAProxyTargets(t, `frontend fe
    bind %[1]s
    stick-table type ipv6 size 10k expire 1m store conn_cur
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_conn_cur(0) gt 2 } { path_beg /slow/ }
    default_backend app
backend app
    server up %[2]s
`, up.Server)
	a, b := clientFrom(2, false), clientFrom(3, false)
	for _, name := range []string{"haproxy", "sluice"} {
		url := targets[name]
		var third, other, fast int
		first, second := up.withTwoHeld(t, name, a, url, func() {
			third, other, fast = status(t, a, url+"/slow/b"), status(t, b, url+"/fast"), status(t, a, url+"/fast")
		})
		time.Sleep(100 * time.Millisecond) // HAProxy counts a connection until it has closed it
		after := status(t, a, url+"/slow/c")
		got := []int{third, other, fast, first, second, after}
		if want := []int{429, 200, 200, 200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: third, another address, a path without the limit, the two held, the one after: %v, want %v", name, got, want)
		}
	}
}

// haproxyDefaults starts every test's HAProxy configuration.
const haproxyDefaults = `defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
`

// startHAProxyTargets starts Debian's haproxy with haproxyDefaults and
// sections, in which %[1]s is the address to bind and %[2]s the upstream's,
// and sluice serving the configuration imported from the same file, in
// front of up. It returns their base URLs by name.
func startHAProxyTargets(t *testing.T, sections string, up *httptest.Server) map[string]string {
	t.Helper()
	addr := realtest.FreeAddr(t)
	cfg := haproxyDefaults + fmt.Sprintf(sections, addr, up.Listener.Addr())
	tr, err := migrate.HAProxy(cfg, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	realtest.HAProxy(t, addr, cfg)
	return map[string]string{"haproxy": "http://" + addr, "sluice": startSluice(t, tr, up.URL)}
}
