package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// shedConfig has every class of degradation.classes, a Retry-After of 2 s
// for a shed request, and limits no test here reaches (1000 a minute, 500
// at a degraded level).
const shedConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
degradation:
  factor: 0.5
  retry_after: 2s
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
  classes:
    expensive: ["POST /api/generate"]
    critical: ["POST /api/pay"]
    health: ["GET /health"]
`

// shedCases are requests and whether each level sheds them: level 1
// (elevated) the expensive endpoint; level 2 (high) writes too, but for
// the critical endpoint; level 3 (critical) all but health checks.
var shedCases = []struct {
	level, method, path string
	shed                bool
}{
	{"elevated", "POST", "/api/generate", true},
	{"elevated", "POST", "/api/orders", false},
	{"elevated", "GET", "/api/search", false},
	{"high", "POST", "/api/generate", true},
	{"high", "POST", "/api/orders", true},
	{"high", "DELETE", "/api/orders/7", true},
	{"high", "POST", "/api/pay", false},
	{"high", "GET", "/api/search", false},
	{"critical", "GET", "/api/search", true},
	{"critical", "POST", "/api/pay", true},
	{"critical", "GET", "/health", false},
}

// pin pins the degradation level of f's server.
func (f *fixture) pin(t *testing.T, level string) {
	t.Helper()
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("pin %s: %d %s", level, r.StatusCode, readAll(t, r))
	}
}

// forwardAuth asks f's forward-auth about method and uri, described as
// Traefik and Caddy do, for the client at X-Forwarded-For for.
func (f *fixture) forwardAuth(t *testing.T, method, uri, forwardedFor string) *http.Response {
	t.Helper()
	return f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
		"X-Forwarded-Method": method, "X-Forwarded-Uri": uri, "X-Forwarded-For": forwardedFor})
}

// wantShed checks the answer to a request a degradation level shed, of
// status: Retry-After (degradation.retry_after), uncacheable, no RateLimit
// fields (nothing was decided), Sluice-Refusal naming the problem type for
// a front proxy that reads only headers, and the problem body of a
// temporary reduced capacity.
func wantShed(t *testing.T, r *http.Response, status int, what string) {
	t.Helper()
	body := readAll(t, r)
	for name, want := range map[string]string{
		"Retry-After":    "2",
		"Cache-Control":  "no-store",
		"Content-Type":   "application/problem+json",
		"Sluice-Refusal": "temporary-reduced-capacity",
	} {
		if got := r.Header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %s %q, want %q", what, name, got, want)
		}
	}
	if got := r.Header.Values("RateLimit"); len(got) != 0 {
		t.Errorf("%s: RateLimit %q on a shed request, which nothing decided", what, got)
	}
	var p struct {
		Type   string
		Status int
		Detail string
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("%s: body %q: %v", what, body, err)
	}
	if r.StatusCode != status || p.Status != status || p.Type != "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity" ||
		!strings.Contains(p.Detail, "Retry-After") {
		t.Errorf("%s: %d %s, want %d with a problem of type …#temporary-reduced-capacity", what, r.StatusCode, body, status)
	}
}

// Forward-auth sheds the request it is told of as the reverse proxy sheds
// the same request, level by level and class by class: a front proxy's
// operator who pins "high" in an incident has its writes refused, and
// "critical" leaves only health checks. Before, forward-auth admitted
// every one of them at every level. A shed request spends nothing.
func TestForwardAuthShedsAsTheProxyDoes(t *testing.T) {
	f := newFixture(t, shedConfig)
	level := ""
	for _, c := range shedCases {
		if c.level != level {
			f.pin(t, c.level)
			level = c.level
		}
		what := c.level + ", " + c.method + " " + c.path
		proxied := f.do(t, c.method, c.path, "", nil)
		readAll(t, proxied)
		if want := map[bool]int{true: 503, false: 200}[c.shed]; proxied.StatusCode != want {
			t.Fatalf("%s through the proxy: %d, want %d", what, proxied.StatusCode, want)
		}
		r := f.forwardAuth(t, c.method, c.path, "203.0.113.5")
		if c.shed {
			wantShed(t, r, http.StatusServiceUnavailable, "forward-auth, "+what)
		} else if body := readAll(t, r); r.StatusCode != http.StatusOK {
			t.Errorf("forward-auth, %s: %d %s, want 200 as the proxy", what, r.StatusCode, body)
		}
	}
	// nginx's description (X-Original-*) is shed alike.
	f.pin(t, "high")
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
		"X-Original-Method": "PUT", "X-Original-URI": "/api/orders/7?x=1", "X-Forwarded-For": "203.0.113.5"})
	wantShed(t, r, http.StatusServiceUnavailable, "forward-auth, high, X-Original-Method: PUT")

	// The client was shed 7 times and admitted 5 times (a minute's 500
	// at a degraded level): back at level 0, its next request leaves 994
	// of its 1000.
	f.pin(t, "normal")
	r = f.forwardAuth(t, "GET", "/api/search", "203.0.113.5")
	if got := r.Header.Get("RateLimit"); r.StatusCode != 200 || got != `"per-minute";r=994;t=60` {
		t.Errorf("after the sheds: %d, RateLimit %q, want r=994: a shed request spends nothing", r.StatusCode, got)
	}
}

// nginx's auth_request turns every status but 2xx, 401 and 403 into a
// 500, so a shed request is answered with the configured deny status, as
// a refusal is, and its Sluice-Refusal header tells the two apart for
// nginx's configuration (examples/nginx/sluice.conf turns it into a 503).
func TestForwardAuthShedsWithTheDenyStatus(t *testing.T) {
	f := newFixture(t, strings.Replace(shedConfig, "identity:", "response:\n  deny_status: 403\nidentity:", 1))
	f.pin(t, "critical")
	wantShed(t, f.forwardAuth(t, "GET", "/api/search", "203.0.113.5"), http.StatusForbidden, "forward-auth, critical, deny_status 403")
	if r := f.forwardAuth(t, "GET", "/health", "203.0.113.5"); r.StatusCode != http.StatusOK {
		t.Errorf("forward-auth, critical, a health check: %d, want 200", r.StatusCode)
	}
}

// A shed on forward-auth, which Caddy and Traefik hand to the client as it
// is, lets an allowed origin's script read it (response.cors), as a
// refusal does: its Retry-After above all.
func TestForwardAuthShedCarriesCORS(t *testing.T) {
	f := newFixture(t, corsConfig+`
degradation:
  retry_after: 2s
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
  classes:
    expensive: ["GET /items"]
`)
	f.pin(t, "elevated")
	ask := func(origin string) *http.Response {
		return f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/items",
			"X-Forwarded-For": "198.51.100.7", "Origin": origin})
	}
	r := ask("https://app.example.com")
	if r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		r.Header.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("shed, an allowed origin: %d %q", r.StatusCode, r.Header)
	}
	if r := ask("https://evil.example.org"); r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("shed, another origin: %d %q", r.StatusCode, r.Header)
	}
}
