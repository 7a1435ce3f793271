package migrate_test

import (
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// A src_http_req_rate lookup in a deny rule BEFORE the track-sc that counts
// the request: HAProxy looks the table up without the current request (it
// is tracked only after the deny passes), so with "gt 10" the 11th request
// of a period finds 10 and passes, the 12th finds 11 and is refused (and,
// refused before its tracker, is not counted): 11 per period. The
// imported rule holds 11, not 10.
func TestHAProxyLookupBeforeItsTrackerAdmitsOneMore(t *testing.T) {
	src := `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request deny deny_status 429 if { src_http_req_rate gt 10 }
    http-request track-sc0 src
    default_backend app
backend app
    server s 127.0.0.1:9000
`
	tr, err := migrate.Import("haproxy", src, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, tr, true)
	if len(cfg.Rules) != 1 {
		t.Fatalf("%d rules, want 1", len(cfg.Rules))
	}
	if got := cfg.Rules[0].Limits[0].Quantity(); got != 11 {
		t.Errorf("rule %s: quantity %d, want 11 (the lookup before the tracker reads the count without the request: gt 10 admits 11)", ruleString(cfg.Rules[0]), got)
	}
}

// The same against real HAProxy: 5 requests from one address under
// "deny if { src_http_req_rate gt 3 }" written before "track-sc0 src".
func TestHAProxyLookupBeforeItsTrackerAgreesWithHAProxy(t *testing.T) {
	const site = `frontend fe
    bind %[1]s
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request deny deny_status 429 if { src_http_req_rate gt 3 }
    http-request track-sc0 src
    default_backend app
backend app
    server up %[2]s
`
	targets := startHAProxyTargets(t, site, okUpstream(t))
	seq := []haproxyRequest{{2, "GET", "/a", ""}, {2, "GET", "/a", ""}, {2, "GET", "/a", ""}, {2, "GET", "/a", ""}, {2, "GET", "/a", ""}, {2, "GET", "/a", ""}}
	expectSameStatuses(t, targets, seq, []int{200, 200, 200, 200, 429, 429})
}

// A src_http_req_rate lookup reads the table that a conditional tracker
// fills: "track-sc0 src if { path_beg /api/ }" counts /api/ requests only,
// so a client sending /other alone never moves the count and HAProxy
// admits them all, at any rate: the imported rule counts what the tracker
// tracks.
func TestHAProxyLookupOfAConditionalTrackerAgreesWithHAProxy(t *testing.T) {
	const site = `frontend fe
    bind %[1]s
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src if { path_beg /api/ }
    http-request deny deny_status 429 if { src_http_req_rate gt 3 }
    default_backend app
backend app
    server up %[2]s
`
	targets := startHAProxyTargets(t, site, okUpstream(t))
	seq := []haproxyRequest{{2, "GET", "/other", ""}, {2, "GET", "/other", ""}, {2, "GET", "/other", ""}, {2, "GET", "/other", ""}, {2, "GET", "/other", ""}}
	expectSameStatuses(t, targets, seq, []int{200, 200, 200, 200, 200})
}

// A table whose entries expire (expire 2s) long before its period
// (http_req_rate(1m)) forgets a client 2 s after its last tracked
// request: HAProxy then starts it at 0 again, so a client pausing 3 s
// between bursts of 10 gets 10 per burst, where the imported
// sliding-window-counter of 10 per minute refuses every burst after the
// first. The report says so.
func TestHAProxyExpireShorterThanThePeriodIsReported(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 2s store http_req_rate(1m)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 10 }
    default_backend app
backend app
    server s 127.0.0.1:9000
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "expire") {
		t.Errorf("expire 2s, shorter than http_req_rate(1m), is not reported: HAProxy forgets an idle client's count after 2 s, the imported rule keeps it a minute")
	}
}

// Two track-sc lines writing one key into one table count a request once
// for each that tracks it, which one rule cannot count: a lookup of that
// key is not imported, and the report says why.
func TestHAProxyLookupOfTwoTrackersIsNotImported(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 2m store http_req_rate(1m)
    http-request track-sc0 src
    http-request track-sc1 src if { path_beg /api/ }
    http-request deny deny_status 429 if { src_http_req_rate gt 10 }
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }
    default_backend app
backend app
    server s 127.0.0.1:9000
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "not imported: several track-sc lines (4, 5) write src into table fe") {
		t.Errorf("a lookup of a key two trackers write is not reported as not imported")
	}
}
