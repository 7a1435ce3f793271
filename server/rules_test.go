package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// rulesConfig is testConfig (3 a minute per client, 127.0.0.1 trusted)
// with two rules: 2 searches a minute per X-Tenant (believed from trusted
// proxies, else keyed by the client address) and 1 upload a minute per
// client.
func rulesConfig(t *testing.T) string {
	t.Helper()
	return realtest.Replace(t, "testConfig", testConfig, "exempt:", `rules:
  - name: tenants
    match: {paths: ["/api/search"]}
    key: ["header:X-Tenant"]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
  - name: uploads
    match: {methods: [POST], paths: ["/api/uploads/{name...}"]}
    limits: [{name: per-minute, algorithm: sliding-window-log, quantity: 1, window: 1m}]
exempt:`)
}

func tenant(name string) map[string]string { return map[string]string{"X-Tenant": name} }

// TestRulesThroughTheProxy: through the reverse proxy, on memory and Redis,
// two header values have quotas of their own; a route-scoped rule refuses
// its route while another passes; a refusal names the rule's limit and
// spends nothing of the plan.
func TestRulesThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, rulesConfig(t), kind)
		var got []int
		for _, name := range []string{"acme", "acme"} {
			got = append(got, f.do(t, "GET", "/api/search", "", tenant(name)).StatusCode)
		}
		// acme's third search is refused by the rule alone (the client has
		// 1 of its plan's 3 left), and says so.
		r := f.do(t, "GET", "/api/search", "", tenant("acme"))
		body := readAll(t, r)
		if r.StatusCode != 429 || !strings.Contains(body, `"violated-policies":["tenants.per-minute"]`) {
			t.Errorf("acme's refusal: %d %s", r.StatusCode, body)
		}
		if got, want := r.Header.Get("RateLimit"), `"per-minute";r=1;t=60, "tenants.per-minute";r=0;t=60`; got != want {
			t.Errorf("acme's refusal: RateLimit %q, want %q", got, want)
		}
		got = append(got, r.StatusCode, f.do(t, "GET", "/api/search", "", tenant("globex")).StatusCode)
		if want := "[200 200 429 200]"; fmt.Sprint(got) != want {
			t.Fatalf("acme ×3, globex: %v, want %v", got, want)
		}

		// The client (by address) spent all 3 of its plan's: the upload
		// rule's refusal would be the plan's; a new minute frees both.
		f.clock.Advance(61e9)
		up1 := f.do(t, "POST", "/api/uploads/a.txt", "x", nil)
		up2 := f.do(t, "POST", "/api/uploads/b.txt", "x", nil)
		other := f.do(t, "GET", "/api/other", "", nil)
		if up1.StatusCode != 200 || up2.StatusCode != 429 || other.StatusCode != 200 {
			t.Fatalf("upload, upload, other route: %d %d %d, want 200 429 200", up1.StatusCode, up2.StatusCode, other.StatusCode)
		}
		if got, want := other.Header.Get("RateLimit"), `"per-minute";r=1;t=59`; got != want {
			t.Errorf("after an upload, its refusal and another route: RateLimit %q, want %q (the refusal spent nothing)", got, want)
		}
		if n := f.hits.Load(); n != 5 {
			t.Errorf("upstream saw %d requests, want the 5 admitted", n)
		}
		f.noStoreErrors(t)
	})
}

// TestRuleHeaderFromAnUntrustedPeerFallsBackToTheAddress: where the peer is
// not a trusted proxy, X-Tenant is not believed: every tenant the client
// names shares its address's quota.
func TestRuleHeaderFromAnUntrustedPeerFallsBackToTheAddress(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "rulesConfig", rulesConfig(t), "trusted_proxies: [127.0.0.1/32]", "trusted_proxies: [10.0.0.0/8]")
		f := newFixture(t, cfg, kind)
		var got []int
		for _, name := range []string{"a", "b", "c"} {
			got = append(got, f.do(t, "GET", "/api/search", "", tenant(name)).StatusCode)
		}
		if fmt.Sprint(got) != "[200 200 429]" {
			t.Fatalf("three tenants from one untrusted address: %v, want [200 200 429]", got)
		}
	})
}

// TestNginxForwardAuthWithRules: behind real nginx (forward-auth), two
// X-Tenant values have quotas of their own, and the client sees the rule's
// limit in RateLimit-Policy.
func TestNginxForwardAuthWithRules(t *testing.T) {
	f := newFixture(t, realtest.Replace(t, "rulesConfig", rulesConfig(t), "response:\n", "response:\n  deny_status: 403\n"))
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	var got []int
	for _, name := range []string{"acme", "acme", "acme", "globex"} {
		r := frontCall(t, "GET", base+"/api/search", tenant(name))
		got = append(got, r.status)
		if r.status == 200 && r.header.Get("RateLimit-Policy") != `"per-minute";q=3;w=60, "tenants.per-minute";q=2;w=60` {
			t.Errorf("RateLimit-Policy %q", r.header.Get("RateLimit-Policy"))
		}
	}
	if fmt.Sprint(got) != "[200 200 429 200]" {
		t.Fatalf("acme ×3, globex through nginx: %v, want [200 200 429 200]", got)
	}
	if n := f.hits.Load(); n != 3 {
		t.Errorf("upstream saw %d requests, want the 3 admitted", n)
	}
}

// TestPlanScopedRulesThroughTheProxy: one route limited per plan by two
// rules scoped to plans, on memory and Redis: a free key gets the free
// plan's rule and a pro key the pro plan's, each refused by its own; the
// key admin API shows each key the rule of its plan only.
func TestPlanScopedRulesThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "testConfig", testConfig, "exempt:", `rules:
  - name: search-free
    match: {paths: ["/api/search"], plans: [free]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
  - name: search-pro
    match: {paths: ["/api/search"], plans: [pro]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
exempt:`)
		cfg = realtest.Replace(t, "testConfig", cfg, "keys:\n", "keys:\n  - {name: k2, sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4, plan: pro} # demo-pro-key\n")
		f := newFixture(t, cfg, kind)
		for _, c := range []struct {
			key, rule, other string
			admitted         int
		}{
			{"demo-free-key", "search-free", "search-pro", 1},
			{"demo-pro-key", "search-pro", "search-free", 2},
		} {
			h := map[string]string{"X-API-Key": c.key}
			for i := range c.admitted {
				r := f.do(t, "GET", "/api/search", "", h)
				readAll(t, r)
				if p := r.Header.Get("RateLimit-Policy"); r.StatusCode != 200 || !strings.Contains(p, c.rule+".per-minute") || strings.Contains(p, c.other) {
					t.Fatalf("%s, search %d: %d, RateLimit-Policy %q: want 200 under %s alone", c.key, i+1, r.StatusCode, p, c.rule)
				}
			}
			r := f.do(t, "GET", "/api/search", "", h)
			if body := readAll(t, r); r.StatusCode != 429 || !strings.Contains(body, `"violated-policies":["`+c.rule+`.per-minute"]`) {
				t.Errorf("%s, search %d: %d %s, want 429 by %s.per-minute", c.key, c.admitted+1, r.StatusCode, body, c.rule)
			}
		}
		r := f.do(t, "GET", "/v1/keys/name:k2", "", nil)
		if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, `"search-pro.per-minute"`) || strings.Contains(body, "search-free") {
			t.Errorf("inspecting the pro key: %d %s, want its plan's rule only", r.StatusCode, body)
		}
		f.noStoreErrors(t)
	})
}
