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
