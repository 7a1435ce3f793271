package server_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// Forward-auth judges the path the front proxy routes by: nginx's $uri,
// Caddy's and Traefik's path matchers take the request's path decoded and
// its dot segments resolved (RFC 3986 §5.2.4), encoded ones ("%2e%2e",
// "..%2F") included. A client does not make a request exempt, nor cheaper,
// by encoding a dot segment or a slash: every check (exemptions, costs,
// rules) sees that one path.
func TestForwardAuthJudgesTheDecodedCleanPath(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`, `exempt: ["GET /api/health", "GET /public/"]`)
	f := newFixture(t, cfg)
	ask := func(ip int, method, uri string) (int, string) {
		t.Helper()
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
			"X-Original-Method": method, "X-Original-URI": uri, "X-Forwarded-For": fmt.Sprintf("198.51.100.%d", ip)})
		return r.StatusCode, r.Header.Get("RateLimit")
	}
	for i, uri := range []string{"/public/%2e%2e/api/x", "/public/%2E%2E/api/x", "/public/..%2Fapi/x", "/public/%2e%2e%2fapi/x", "/public/a/%2e%2e/%2e%2e/api/x"} {
		if status, rl := ask(60+i, "GET", uri); status != 200 || rl != `"per-minute";r=2;t=60` {
			t.Errorf("GET %s: %d RateLimit %q, want 200 with r=2 (limited as GET /api/x, not exempt as /public/)", uri, status, rl)
		}
	}
	if status, rl := ask(70, "GET", "/public/%61"); status != 200 || rl != "" {
		t.Errorf("GET /public/%%61: %d RateLimit %q, want exempt", status, rl)
	}
	// "POST /api/generate" costs 2, however its slash is written.
	if status, rl := ask(71, "POST", "/api%2Fgenerate"); status != 200 || rl != `"per-minute";r=1;t=60` {
		t.Errorf("POST /api%%2Fgenerate: %d RateLimit %q, want r=1 (cost 2)", status, rl)
	}
}

// Through nginx running examples/nginx/sluice.conf: nginx routes
// /public/%2e%2e/api/search as /api/search, and so does sluice — the
// client's minute runs out as for /api/search.
func TestNginxEncodedDotSegmentsAreNotExempt(t *testing.T) {
	cfg := realtest.Replace(t, "frontConfig", frontConfig(t, "403"), `exempt: ["GET /api/health"]`, `exempt: ["GET /api/health", "GET /public/"]`)
	f := newFixture(t, cfg)
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	addr := base[len("http://"):]
	statuses := map[int]int{}
	for range 4 {
		statuses[rawStatus(t, addr, "GET /public/%2e%2e/api/search HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]++
	}
	if statuses[200] != 3 || statuses[429] != 1 {
		t.Errorf("4 requests for /public/%%2e%%2e/api/search: statuses %v, want three 200 and one 429", statuses)
	}
}
