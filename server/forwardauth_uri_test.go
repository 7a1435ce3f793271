package server_test

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// searchRuleConfig is testConfig with a plan limit far away and a rule that
// allows each client one GET /api/search a minute.
func searchRuleConfig(t *testing.T, denyStatus string) string {
	t.Helper()
	return realtest.Replace(t, "testConfig", testConfig,
		"quantity: 3,", "quantity: 300,",
		"exempt:", `rules:
  - name: search
    match: {paths: ["/api/search"]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
exempt:`,
		"response:\n", "response:\n  deny_status: "+denyStatus+"\n")
}

// A request target has no fragment (RFC 9112 §3.2: origin-form is
// absolute-path ["?" query]); what follows a "#" is one (RFC 3986 §3.5).
// nginx's $request_uri, which its auth_request passes as X-Original-URI,
// keeps a "#…" the client wrote, while nginx routes by the path before it
// and passes the raw target to the API. Forward-auth judges that path: a
// client does not escape a route's limit, nor its cost, with a fragment.
func TestForwardAuthURIFragmentIsNotPath(t *testing.T) {
	f := newFixture(t, searchRuleConfig(t, "429"))
	ask := func(method, uri string) int {
		t.Helper()
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
			"X-Forwarded-Method": method, "X-Forwarded-Uri": uri, "X-Forwarded-For": "198.51.100.20"})
		return r.StatusCode
	}
	if got := ask("GET", "/api/search"); got != 200 {
		t.Fatalf("first search: %d", got)
	}
	for _, uri := range []string{"/api/search#x", "/api/search#", "/api/search?q=1#x", "/api/search#/../other"} {
		if got := ask("GET", uri); got != 429 {
			t.Errorf("%s: %d, want 429 (the search rule's minute is spent)", uri, got)
		}
	}
	// "POST /api/generate" costs 2 of the plan's 300 with the fragment too.
	before := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": "/other", "X-Forwarded-For": "198.51.100.21"}).Header.Get("RateLimit")
	f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/generate#x", "X-Forwarded-For": "198.51.100.21"})
	after := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": "/other", "X-Forwarded-For": "198.51.100.21"}).Header.Get("RateLimit")
	if before != `"per-minute";r=299;t=60` || after != `"per-minute";r=296;t=60` {
		t.Errorf("RateLimit before and after POST /api/generate#x: %q, %q; want r=299 then r=296 (cost 2, then 1)", before, after)
	}
}

// The same through a real nginx running examples/nginx/sluice.conf: a
// target with "#" reaches the API only as its path's limit allows.
func TestNginxForwardAuthFragment(t *testing.T) {
	f := newFixture(t, searchRuleConfig(t, "403"))
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	addr := strings.TrimPrefix(base, "http://")
	if got := rawStatus(t, addr, "GET /api/search HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); got != 200 {
		t.Fatalf("first search: %d", got)
	}
	if got := rawStatus(t, addr, "GET /api/search#x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); got != 429 {
		t.Errorf("GET /api/search#x: %d, want 429", got)
	}
	if n := f.hits.Load(); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
}
