package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestCaddyForwardAuth runs examples/caddy/Caddyfile in a real Caddy in
// front of the fixture's upstream, deciding with a real sluice server (deny
// status 429, the default: Caddy passes refusals through unchanged).
func TestCaddyForwardAuth(t *testing.T) {
	f := newFixture(t, frontConfig(t, "429"))
	base := startCaddy(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	key := map[string]string{"X-API-Key": "demo-free-key"}

	// Admitted requests reach the upstream; the client sees its quota. A
	// RateLimit header the client made up is dropped.
	for i, want := range []string{`"per-minute";r=2;t=60`, `"per-minute";r=1;t=60`, `"per-minute";r=0;t=60`} {
		r := frontCall(t, "GET", base+"/api/search?q=1", map[string]string{"X-API-Key": "demo-free-key", "RateLimit": "forged"})
		if r.status != 200 || r.body != "upstream:/api/search" {
			t.Fatalf("request %d: %d %q", i+1, r.status, r.body)
		}
		if got := r.header.Values("RateLimit"); len(got) != 1 || got[0] != want {
			t.Errorf("request %d: RateLimit %q, want %q", i+1, got, want)
		}
		if got := r.header.Values("RateLimit-Policy"); len(got) != 1 || got[0] != `"per-minute";q=3;w=60` {
			t.Errorf("request %d: RateLimit-Policy %q", i+1, got)
		}
	}

	// The next one is refused: sluice's own 429 reaches the client, body
	// and all.
	r := frontCall(t, "GET", base+"/api/search?q=1", key)
	wantRefusal(t, r, "4th request")
	if !strings.Contains(r.body, `"violated-policies":["per-minute"]`) || !strings.Contains(r.body, `"plan":"free"`) {
		t.Errorf("4th request: not sluice's body: %s", r.body)
	}
	if n := f.hits.Load(); n != 3 {
		t.Errorf("upstream saw %d requests, want the 3 admitted", n)
	}
	checkStanding(t, f, base, key, "Caddy")

	checkOtherClients(t, f, base, "Caddy")
}

// TestCaddyForwardAuthHostRule: through the example, sluice sees the host
// the client asked for (Caddy's X-Forwarded-Host), so a rule for one host
// limits that host's requests and no other's.
func TestCaddyForwardAuthHostRule(t *testing.T) {
	f := newFixture(t, frontConfig(t, "429")+hostRule("api.example.com"))
	checkHostRule(t, f, startCaddy(t, serveOn(t, f.srv), f.srv.Config().Upstream), "Caddy")
}

// TestCaddyForwardAuthBadDescription: a description sluice refuses with a
// 400 (a client's own X-Forwarded-Uri and X-Original-URI) reaches Caddy's
// client as it is, and nothing reaches the API.
func TestCaddyForwardAuthBadDescription(t *testing.T) {
	f := newFixture(t, frontConfig(t, "429"))
	checkBadDescription(t, f, startCaddy(t, serveOn(t, f.srv), f.srv.Config().Upstream), "Caddy", 400)
}

// TestCaddyForwardAuthCapacity: Caddy passes sluice's own 503 to its
// client, body and headers, both for a request the global limits alone
// refuse under global_status: 503 and for one a degradation level sheds;
// each is marked Sluice-Refusal: temporary-reduced-capacity, and a client
// over its own quota still gets a 429.
func TestCaddyForwardAuthCapacity(t *testing.T) {
	f := newFixture(t, globalConfig(t, "429")+`
degradation:
  retry_after: 2s
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
  classes:
    expensive: ["POST /api/generate"]
`)
	base := startCaddy(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	key := map[string]string{"X-API-Key": "demo-free-key"}
	want503 := func(r frontResponse, what, retryAfter string) {
		t.Helper()
		for name, want := range map[string]string{"Retry-After": retryAfter, "Content-Type": "application/problem+json",
			"Cache-Control": "no-store", "Sluice-Refusal": "temporary-reduced-capacity"} {
			if got := r.header.Values(name); len(got) != 1 || got[0] != want {
				t.Errorf("%s: %s %q, want %q", what, name, got, want)
			}
		}
		if r.status != 503 || !strings.Contains(r.body, `"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"`) ||
			!strings.Contains(r.body, `"status":503`) {
			t.Errorf("%s: %d %s, want a 503 of reduced capacity", what, r.status, r.body)
		}
	}
	f.pin(t, "elevated")
	want503(frontCall(t, "POST", base+"/api/generate", key), "shed", "2")
	f.pin(t, "normal")
	for i := range 3 {
		if r := frontCall(t, "GET", base+"/api/search", key); r.status != 200 {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := frontCall(t, "GET", base+"/api/search", nil); r.status != 200 {
		t.Fatalf("another client's first request: %d %s", r.status, r.body)
	}
	r := frontCall(t, "GET", base+"/api/search", nil)
	want503(r, "refused by the global limit", "60")
	if !strings.Contains(r.body, `"violated-policies":["everyone"]`) {
		t.Errorf("refused by the global limit: not sluice's body: %s", r.body)
	}
	if r := frontCall(t, "GET", base+"/api/search", key); r.status != 429 || len(r.header.Values("Sluice-Refusal")) != 0 {
		t.Errorf("refused by the client's own quota: %d Sluice-Refusal %q %s, want a 429 without it", r.status, r.header.Values("Sluice-Refusal"), r.body)
	}
	if n := f.hits.Load(); n != 4 {
		t.Errorf("upstream saw %d requests, want the 4 admitted", n)
	}
}

// TestCaddyWithoutSluice: when sluice cannot be reached, Caddy answers 502
// and nothing reaches the API: the example fails closed.
func TestCaddyWithoutSluice(t *testing.T) {
	f := newFixture(t, frontConfig(t, "429"))
	r := frontCall(t, "GET", startCaddy(t, listening{admin: deadAddr(t), public: deadAddr(t)}, f.srv.Config().Upstream)+"/api/search", nil)
	if r.status != 502 || f.hits.Load() != 0 {
		t.Errorf("sluice down: %d, upstream saw %d requests", r.status, f.hits.Load())
	}
}

// startCaddy runs examples/caddy/Caddyfile in a real Caddy, with sluice at
// sluiceAddr and the API at upstream, and returns Caddy's base URL.
func startCaddy(t *testing.T, sluice listening, upstream string) string {
	t.Helper()
	addr := realtest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	conf := realtest.Replace(t, "examples/caddy/Caddyfile", readRepoFile(t, "../examples/caddy/Caddyfile"),
		"forward_auth 127.0.0.1:9090 {", "forward_auth "+sluice.admin+" {",
		"reverse_proxy /rate_limit 127.0.0.1:8080 {", "reverse_proxy /rate_limit "+sluice.public+" {",
		"sluice_REPLACE_WITH_CADDY_TOKEN", testToken,
		"reverse_proxy 127.0.0.1:9000", "reverse_proxy "+strings.TrimPrefix(upstream, "http://"),
		"\n:8000 {", "\n:"+port+" {")
	realtest.Caddy(t, addr, conf)
	return "http://" + addr
}
