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
	base := startCaddy(t, serveOn(t, f.srv).admin, f.srv.Config().Upstream)
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

	// Another client (by IP, from Caddy's X-Forwarded-For) has its own
	// quota, and sluice sees the original method and URI: POST
	// /api/generate costs 2 of the 3.
	r = frontCall(t, "POST", base+"/api/generate", nil)
	if r.status != 200 || r.header.Get("RateLimit") != `"per-minute";r=1;t=60` {
		t.Fatalf("POST /api/generate by IP: %d RateLimit %q", r.status, r.header.Get("RateLimit"))
	}
	statuses := frontBurst(t, 6, base+"/api/search", func(r frontResponse) {
		if r.status == 429 {
			wantRefusal(t, r, "burst")
		}
	})
	if statuses[200] != 1 || statuses[429] != 5 {
		t.Errorf("burst of 6 with 1 unit left: statuses %v, want one 200 and five 429", statuses)
	}
	if n := f.hits.Load(); n != 5 {
		t.Errorf("upstream saw %d requests, want the 5 admitted", n)
	}

	// Nothing a client makes up about its address, user or plan gets it
	// more: the proxy does not pass it on to sluice.
	forged := map[string]string{"Forwarded": "for=203.0.113.7", "X-Forwarded-For": "203.0.113.8",
		"X-Real-IP": "203.0.113.9", "X-User-ID": "someone-else", "X-Plan": "pro"}
	if r := frontCall(t, "GET", base+"/api/search", forged); r.status != 429 {
		t.Errorf("a client with made-up forwarding, user and plan headers: %d %q, want 429", r.status, r.header.Get("RateLimit"))
	}

	// Exempt routes pass, without RateLimit headers.
	r = frontCall(t, "GET", base+"/api/health", nil)
	if r.status != 200 || len(r.header.Values("RateLimit")) != 0 || len(r.header.Values("RateLimit-Policy")) != 0 {
		t.Errorf("exempt route: %d %v", r.status, r.header)
	}
}

// TestCaddyWithoutSluice: when sluice cannot be reached, Caddy answers 502
// and nothing reaches the API: the example fails closed.
func TestCaddyWithoutSluice(t *testing.T) {
	f := newFixture(t, frontConfig(t, "429"))
	r := frontCall(t, "GET", startCaddy(t, deadAddr(t), f.srv.Config().Upstream)+"/api/search", nil)
	if r.status != 502 || f.hits.Load() != 0 {
		t.Errorf("sluice down: %d, upstream saw %d requests", r.status, f.hits.Load())
	}
}

// startCaddy runs examples/caddy/Caddyfile in a real Caddy, with sluice at
// sluiceAddr and the API at upstream, and returns Caddy's base URL.
func startCaddy(t *testing.T, sluiceAddr, upstream string) string {
	t.Helper()
	addr := realtest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	conf := realtest.Replace(t, "examples/caddy/Caddyfile", readRepoFile(t, "../examples/caddy/Caddyfile"),
		"forward_auth 127.0.0.1:9090 {", "forward_auth "+sluiceAddr+" {",
		"sluice_REPLACE_WITH_CADDY_TOKEN", testToken,
		"reverse_proxy 127.0.0.1:9000", "reverse_proxy "+strings.TrimPrefix(upstream, "http://"),
		"\n:8000 {", "\n:"+port+" {")
	realtest.Caddy(t, addr, conf)
	return "http://" + addr
}
