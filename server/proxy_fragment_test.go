package server_test

import (
	"fmt"
	"strings"
	"testing"
)

// A request target has no fragment (RFC 9112 §3.2), yet Go's server keeps
// a "#" a client sends in the request's query (or path), and the reverse
// proxy forwards the target as sent, where nginx ($args, $arg__method and
// the QUERY_STRING fastcgi_params pass to PHP), Express (url.parse), Puma
// and gunicorn end the query at the "#": "POST
// /api/items/x?_method=DELETE#x" is the DELETE to Laravel behind nginx,
// and "?tenant=acme#1" is tenant acme, each "#…" of which a query: key
// read as sent would count apart. The proxy refuses such a target with a
// 400 before any decision, nothing spent: it judges no request otherwise
// than its upstream reads it.
func TestTheProxyRefusesATargetWithAFragment(t *testing.T) {
	f := newFixture(t, checkOverrideConfig)
	addr := strings.TrimPrefix(f.http.URL, "http://")
	for i, line := range []string{"POST /api/items/x?_method=DELETE#x", "GET /api/search?tenant=acme#1", "GET /api/items/x#x"} {
		client := fmt.Sprintf("198.51.100.%d", i+1)
		if got := sendRaw(t, addr, line+" HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: "+client+"\r\nContent-Length: 0\r\nConnection: close\r\n"); got != 400 {
			t.Errorf("%s: %d, want 400", line, got)
		}
		r := f.do(t, "GET", "/api/items/x", "", map[string]string{"X-Forwarded-For": client})
		readAll(t, r)
		if m := rateLimitRemaining.FindStringSubmatch(r.Header.Get("RateLimit")); m == nil || m[1] != "99" {
			t.Errorf("a GET after %s: RateLimit %q, want remaining 99 (the 400 spent nothing)", line, r.Header.Get("RateLimit"))
		}
	}
}

// Forward-auth and the decision API judge a described URI, which they
// read without its fragment (docs/api.md: a "#" ends it), as nginx reads
// the request: a POST to "/api/items/x?_method=DELETE#x" is the DELETE,
// at its cost of 5.
func TestADescribedMethodOverrideIsReadBeforeAFragment(t *testing.T) {
	got := judgeOverrideOn(t, newFixture(t, checkOverrideConfig), overrideCase{name: "_method before a fragment", uri: "/api/items/x?_method=DELETE#x"}, 1)
	for i, surface := range []string{"forward-auth", "/v1/check"} {
		if g := got[i+1]; g.status != 200 || g.remaining != "95" {
			t.Errorf("%s, POST /api/items/x?_method=DELETE#x: %d, remaining %s; want 200 and 95 (the DELETE's cost)", surface, g.status, g.remaining)
		}
	}
}
