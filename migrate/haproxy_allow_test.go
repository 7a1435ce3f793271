package migrate_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// "http-request allow" stops the evaluation of the section's http-request
// rules and lets the request pass (HAProxy's configuration manual): a
// request from 10.0.0.0/8 below never reaches the track-sc0 nor the deny,
// so it is never counted or refused. The import makes an allow on client
// addresses exempt addresses (an allow on paths, methods, hosts or headers
// an except: entry of the rule), so those clients are never limited.
func TestImportedHAProxyAllowBeforeDenyExemptsItsRequests(t *testing.T) {
	src := `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request allow if { src 10.0.0.0/8 }
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1 }
    default_backend app
backend app
    server a 127.0.0.1:8080
`
	tr, err := migrate.Import("haproxy", src, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a", "", "192.0.2.1", 200},
		{"/a", "", "192.0.2.1", 429}, // over 1 per 10s
		{"/a", "", "10.1.2.3", 200},
		{"/a", "", "10.1.2.3", 200}, // allowed before tracking: never limited
		{"/a", "", "10.1.2.3", 200},
	})
}

// A stick counter is tracked by the first track-sc that runs for a request,
// which is the first whose condition holds: below, sc0 is the X-Key header
// when the request has one, else its address (a common "by key, else by
// address" setup). The import keys the rule by the header with the
// address as its fallback (fallback: ip), so requests without X-Key are
// limited per address, as HAProxy limits them.
func TestImportedHAProxyConditionalTrackerFallsToTheNext(t *testing.T) {
	src := `frontend fe
    bind :80
    stick-table type string len 64 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 req.hdr(x-key) if { req.hdr(x-key) -m found }
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1 }
    default_backend app
backend app
    server a 127.0.0.1:8080
`
	tr, err := migrate.Import("haproxy", src, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/a", "", "192.0.2.1", 200},
		{"/a", "", "192.0.2.1", 429}, // no X-Key: tracked by src, over 1 per 10s
	})
}

// An ACL defined on several lines matches when any of its definitions does
// (HAProxy ORs them). A deny on such an ACL whose definitions compare
// counters ("too fast by address, or by key") refuses when either is over.
// The import writes such an ACL out as one term per definition, each a
// rule of its own (or, where one cannot be imported, a line of the report
// saying so): the second request by address is refused.
func TestImportedHAProxyACLOfTwoCounterDefinitionsRefusesOnEither(t *testing.T) {
	src := `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    acl too_fast sc_http_req_rate(0) gt 1
    acl too_fast sc_http_req_rate(1) gt 5
    http-request track-sc0 src
    http-request track-sc1 req.hdr(x-key) table keys
    http-request deny deny_status 429 if too_fast
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1000 } { path_beg /x/ }
    default_backend app
backend keys
    stick-table type string size 100k expire 30s store http_req_rate(10s)
backend app
    server a 127.0.0.1:8080
`
	tr, err := migrate.Import("haproxy", src, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.Differences {
		if strings.Contains(d.Where, "line 8") && strings.Contains(d.Text, "not imported") {
			t.Errorf("%s: %s", d.Where, d.Text)
		}
	}
	h := serveImported(t, tr)
	got := statusesOf(h, []string{"GET", "/a"}, []string{"GET", "/a"})
	if got[1] != 429 {
		t.Errorf("statuses %v, want the second refused (over 1 per 10s by address)", got)
	}
}

// An allow on a path leaves the path out of the rules after it (except:);
// HAProxy still counts those requests when the tracker runs before the
// allow, which the report says.
func TestImportedHAProxyAllowOfAPathIsLeftOut(t *testing.T) {
	src := `frontend fe
    bind :80
    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request allow if { path_beg /health/ }
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 1 }
    default_backend app
backend app
    server a 127.0.0.1:8080
`
	tr, err := migrate.Import("haproxy", src, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if got := differsLines(tr, "HAProxy still counts the requests of { path_beg /health/ }"); len(got) != 1 {
		t.Errorf("the report does not say HAProxy counts the allowed requests: %q", got)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/health/live", "", "192.0.2.1", 200},
		{"/health/live", "", "192.0.2.1", 200}, // allowed before the deny
		{"/a", "", "192.0.2.1", 200},
		{"/a", "", "192.0.2.1", 429},
	})
}
