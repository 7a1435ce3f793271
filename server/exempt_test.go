package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestExemptAddressIsNeverLimited: through the reverse proxy, on memory and
// Redis, a client of an exempt CIDR (its address read from the trusted
// proxy's X-Forwarded-For) passes however often it comes, spends nothing of
// the quota others see, and is counted in sluice_exempt_requests_total.
func TestExemptAddressIsNeverLimited(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`,
			"exempt:\n  routes: [\"GET /api/health\"]\n  addresses: [192.0.2.0/24]")
		f := newFixture(t, cfg, kind)
		office := map[string]string{"X-Forwarded-For": "192.0.2.77"}
		for i := range 10 {
			r := f.do(t, "GET", "/api/search", "", office)
			if r.StatusCode != 200 || r.Header.Get("RateLimit") != "" {
				t.Fatalf("exempt request %d: %d, RateLimit %q", i+1, r.StatusCode, r.Header.Get("RateLimit"))
			}
		}
		r := f.do(t, "GET", "/api/search", "", map[string]string{"X-Forwarded-For": "198.51.100.1"})
		if got, want := r.Header.Get("RateLimit"), `"per-minute";r=2;t=60`; r.StatusCode != 200 || got != want {
			t.Errorf("another client's first request: %d, RateLimit %q, want %q", r.StatusCode, got, want)
		}
		if n := f.hits.Load(); n != 11 {
			t.Errorf("upstream saw %d requests, want 11", n)
		}
		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		if !strings.Contains(metrics, `sluice_exempt_requests_total{reason="address"} 10`) {
			t.Errorf("metrics lack sluice_exempt_requests_total{reason=\"address\"} 10:\n%s", grepLines(metrics, "exempt"))
		}
		f.noStoreErrors(t)
	})
}

// TestExemptPlanIsNeverLimited: on memory and Redis, the clients of an
// exempt plan (pro, by its listed key) pass without RateLimit headers and
// spend nothing; the free plan's are limited as before; each exempt request
// counts in sluice_exempt_requests_total{reason="plan"}.
func TestExemptPlanIsNeverLimited(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "testConfig", testConfig, `exempt: ["GET /api/health"]`,
			"exempt:\n  routes: [\"GET /api/health\"]\n  plans: [pro]")
		cfg = realtest.Replace(t, "testConfig", cfg, "keys:\n", "keys:\n  - {name: k2, sha256: 1fbfd5e2a34698deb796eb78add256a067ec065519b8329b1eb85f5e2ef906d4, plan: pro} # demo-pro-key\n")
		f := newFixture(t, cfg, kind)
		for i := range 5 {
			r := f.do(t, "GET", "/api/search", "", map[string]string{"X-API-Key": "demo-pro-key"})
			if r.StatusCode != 200 || r.Header.Get("RateLimit") != "" {
				t.Fatalf("pro request %d: %d, RateLimit %q", i+1, r.StatusCode, r.Header.Get("RateLimit"))
			}
		}
		var got []int
		for range 4 {
			got = append(got, f.do(t, "GET", "/api/search", "", map[string]string{"X-API-Key": "demo-free-key"}).StatusCode)
		}
		if want := "[200 200 200 429]"; fmt.Sprint(got) != want {
			t.Errorf("free ×4: %v, want %s", got, want)
		}
		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		if !strings.Contains(metrics, `sluice_exempt_requests_total{reason="plan"} 5`) {
			t.Errorf("metrics lack sluice_exempt_requests_total{reason=\"plan\"} 5:\n%s", grepLines(metrics, "exempt"))
		}
		if pro, free := readAll(t, f.do(t, "GET", "/docs?plan=pro", "", nil)), readAll(t, f.do(t, "GET", "/docs?plan=free", "", nil)); !strings.Contains(pro, `id="plan-exempt"`) || strings.Contains(free, `id="plan-exempt"`) {
			t.Errorf("/docs does not say the pro plan (only) is never limited")
		}
		f.noStoreErrors(t)
	})
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
