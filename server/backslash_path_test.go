package server_test

import (
	"fmt"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// IIS (http.sys) un-escapes %5C to "\" and takes it for "/", resolving dot
// segments after: "Http.Sys will un-escape %5C to `\` and convert it to
// `/`. This affects all requests through IIS/Express & WebListener"
// (aspnet/StaticFiles#90), and ASP.NET on IIS routes the path so
// (UrlPath.FixVirtualPathSlashes); IIS's URL Rewrite and ARR match the
// cooked URL too. A raw "\" is forwarded by sluice's proxy as %5C. So GET
// /public/..%5Capi%5Cgenerate is GET /api/generate to such an upstream,
// as GET /internal/..;/api/generate is to Tomcat: no exempt /public/
// request, but one limited as /api/generate is, and POST /api%5Cgenerate
// costs what POST /api/generate does, through the reverse proxy,
// forward-auth and the decision API alike.
func TestABackslashedPathIsLimitedAsTheRouteIISServes(t *testing.T) {
	cfg := realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`, `exempt: ["GET /api/health", "GET /public/"]`)
	f := newFixture(t, cfg)

	t.Run("proxy, exempt subtree", func(t *testing.T) {
		for i, path := range []string{`/public/..%5Capi%5Cgenerate`, `/public/..%5Capi/generate`} {
			r := f.do(t, "GET", path, "", map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", 10+i)})
			if rl := r.Header.Get("RateLimit"); r.StatusCode != 200 || rl != `"per-minute";r=2;t=60` {
				t.Errorf("GET %s through the proxy: %d RateLimit %q, want 200 with r=2: http.sys serves it as GET /api/generate, not exempt as /public/",
					path, r.StatusCode, rl)
			}
		}
	})

	ask := func(ip int, method, uri string) (int, string) {
		t.Helper()
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
			"X-Original-Method": method, "X-Original-URI": uri, "X-Forwarded-For": fmt.Sprintf("198.51.100.%d", ip)})
		return r.StatusCode, r.Header.Get("RateLimit")
	}
	t.Run("forward-auth, exempt subtree", func(t *testing.T) {
		if status, rl := ask(20, "GET", `/public/..%5Capi%5Cgenerate`); status != 200 || rl != `"per-minute";r=2;t=60` {
			t.Errorf("GET /public/..%%5Capi%%5Cgenerate: %d RateLimit %q, want 200 with r=2 (limited as GET /api/generate, not exempt as /public/)", status, rl)
		}
	})
	t.Run("forward-auth, cost", func(t *testing.T) {
		if status, rl := ask(21, "POST", `/api%5Cgenerate`); status != 200 || rl != `"per-minute";r=1;t=60` {
			t.Errorf("POST /api%%5Cgenerate: %d RateLimit %q, want r=1 (cost 2, as POST /api/generate)", status, rl)
		}
	})
	t.Run("decision API", func(t *testing.T) {
		st, m, raw := postCheck(t, f, `{"user":"u1","method":"GET","path":"/public/..%5Capi%5Cgenerate"}`)
		if st != 200 || m["remaining"] != float64(2) {
			t.Errorf("GET /public/..%%5Capi%%5Cgenerate: %d %s, want remaining 2 (limited as GET /api/generate, not exempt as /public/)", st, raw)
		}
		st, m, raw = postCheck(t, f, `{"user":"u2","method":"POST","path":"/api%5Cgenerate"}`)
		if st != 200 || m["cost"] != float64(2) {
			t.Errorf("POST /api%%5Cgenerate: %d %s, want cost 2 (as POST /api/generate)", st, raw)
		}
	})
}

// A rule of a subtree counts the requests http.sys routes into it however
// their slashes are written: /api%5Cadmin/users is /api/admin/users there.
func TestARuleCountsAPathWhoseSlashesAreBackslashes(t *testing.T) {
	f := newFixture(t, `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
anonymous_plan: free
rules:
  - name: admin
    match: {paths: ["/api/admin/"]}
    limits:
      - {name: few, algorithm: fixed-window, quantity: 1, window: 1m}
`)
	from := map[string]string{"X-Forwarded-For": "198.51.100.30"}
	if r := f.do(t, "GET", "/api/admin/users", "", from); r.StatusCode != 200 {
		t.Fatalf("GET /api/admin/users: %d, want 200", r.StatusCode)
	}
	for _, path := range []string{`/api%5Cadmin/users`, `/api/admin%5Cusers`} {
		if r := f.do(t, "GET", path, "", from); r.StatusCode != 429 {
			t.Errorf("GET %s after the rule's one request of the minute: %d (RateLimit-Policy %q), want 429: http.sys routes it to /api/admin/users",
				path, r.StatusCode, r.Header.Get("RateLimit-Policy"))
		}
	}
}
