package server_test

import (
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

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
