package server_test

import (
	"net/http"
	"strings"
	"testing"
)

const corsConfig = `
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
default_plan: free
anonymous_plan: free
exempt: ["OPTIONS /"]
response:
  status_path: /rate_limit
  headers: [ietf, legacy]
  cors:
    origins: [https://app.example.com, "https://*.example.net"]
    credentials: true
`

// With response.cors, an allowed origin's script can read sluice's own
// answers (a refusal, the client's standing) and the RateLimit headers of
// the upstream's answers that the upstream lets it read; another origin
// gets no CORS header from sluice, and the upstream's own CORS headers are
// never doubled.
func TestCORSLetsAllowedOriginsReadTheLimits(t *testing.T) {
	f := newFixture(t, corsConfig)
	send := func(path, origin string) *http.Response {
		t.Helper()
		r := f.do(t, "GET", path, "", map[string]string{"Origin": origin})
		r.Body.Close()
		return r
	}
	const expose = "RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"
	app := "https://app.example.com"
	// Preflights, exempt here, spend nothing.
	for range 3 {
		r := f.do(t, "OPTIONS", "/plain", "", map[string]string{"Origin": app, "Access-Control-Request-Method": "PUT"})
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("preflight: %d", r.StatusCode)
		}
	}

	// The upstream lets the origin read its answer: the limits' headers
	// are exposed beside its own; its Allow-Origin stays the only one.
	r := send("/cors/a", app)
	if got := r.Header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != app {
		t.Errorf("upstream's answer: Access-Control-Allow-Origin %q", got)
	}
	if got := strings.Join(r.Header.Values("Access-Control-Expose-Headers"), ", "); got != "X-Request-Id, "+expose {
		t.Errorf("upstream's answer: Access-Control-Expose-Headers %q", got)
	}
	// The upstream does not: sluice does not overrule it.
	if r := send("/plain", app); r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("an answer the upstream keeps from the origin got %q", r.Header)
	}
	// sluice's refusal: readable by the allowed origin, with credentials.
	if r := send("/plain", app); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third request: %d", r.StatusCode)
	}
	r = send("/plain", app)
	want := map[string]string{"Access-Control-Allow-Origin": app, "Access-Control-Allow-Credentials": "true",
		"Access-Control-Expose-Headers": expose, "Vary": "Origin"}
	for k, v := range want {
		if got := r.Header.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("refusal: %s %q, want %q", k, got, v)
		}
	}
	// The client's standing, under a wildcard origin.
	if r := send("/rate_limit", "https://shop.example.net"); r.Header.Get("Access-Control-Allow-Origin") != "https://shop.example.net" {
		t.Errorf("status path: %q", r.Header)
	}
	// Origins not allowed get nothing from sluice.
	for _, o := range []string{"https://evil.example.org", "https://example.net", "https://app.example.com.evil.org", "null", ""} {
		if r := send("/plain", o); r.Header.Get("Access-Control-Allow-Origin") != "" || r.Header.Get("Access-Control-Expose-Headers") != "" {
			t.Errorf("origin %q: %q", o, r.Header)
		}
	}
}

// A refusal on forward-auth, which Caddy and Traefik hand to the client as
// it is, carries the same CORS headers for an allowed origin.
func TestCORSOnForwardAuthRefusals(t *testing.T) {
	f := newFixture(t, corsConfig)
	ask := func(origin string) *http.Response {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/items",
			"X-Forwarded-For": "198.51.100.7", "Origin": origin})
		r.Body.Close()
		return r
	}
	for range 2 {
		if r := ask("https://app.example.com"); r.StatusCode != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("admitted: %d %q", r.StatusCode, r.Header)
		}
	}
	r := ask("https://app.example.com")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		r.Header.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("refusal: %d %q", r.StatusCode, r.Header)
	}
	if r := ask("https://evil.example.org"); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("refusal to another origin: %d %q", r.StatusCode, r.Header)
	}
}
