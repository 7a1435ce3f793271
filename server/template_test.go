package server_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestErrorCodeBodyThroughTheProxy: with response.body error-code, a
// refusal's body is the preset's shape, with the figures of its headers.
func TestErrorCodeBodyThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, realtest.Replace(t, "testConfig", testConfig, "response:\n", "response:\n  body: error-code\n"), kind)
		key := map[string]string{"Authorization": "Bearer demo-free-key"}
		for range 3 {
			f.do(t, "GET", "/api/search", "", key)
		}
		r := f.do(t, "GET", "/api/search", "", key)
		var got any
		if err := json.Unmarshal([]byte(readAll(t, r)), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"error": map[string]any{
			"code":         "RATE_LIMIT_EXCEEDED",
			"message":      "Rate limit exceeded: 3 units per minute on the free plan. Retry in 60 s. The pro plan allows more.",
			"retryAfter":   60.0,
			"currentUsage": map[string]any{"used": 3.0, "limit": 3.0, "window": "1m", "resetsAt": "2026-11-30T12:01:00Z"},
			"upgrade":      map[string]any{"plan": "pro", "url": "https://example.com/pricing"},
		}}
		if r.StatusCode != 429 || r.Header.Get("Retry-After") != "60" || r.Header.Get("Content-Type") != "application/json" || !reflect.DeepEqual(got, want) {
			t.Errorf("%d %v\n got %v\nwant %v", r.StatusCode, r.Header, got, want)
		}
	})
}

// TestHiddenLimitsAreLeftOutOfTheHeaders: a hidden rule's limits are
// enforced through the proxy but appear in neither RateLimit nor
// RateLimit-Policy; the refusal's body still names them.
func TestHiddenLimitsAreLeftOutOfTheHeaders(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		cfg := realtest.Replace(t, "rulesConfig", rulesConfig(t), "response:\n", "response:\n  hide: [tenants]\n")
		f := newFixture(t, cfg, kind)
		for i := range 3 {
			r := f.do(t, "GET", "/api/search", "", tenant("acme"))
			if got, want := r.Header.Get("RateLimit-Policy"), `"per-minute";q=3;w=60`; got != want {
				t.Errorf("request %d: RateLimit-Policy %q, want %q", i+1, got, want)
			}
			if got := r.Header.Get("RateLimit"); got != []string{`"per-minute";r=2;t=60`, `"per-minute";r=1;t=60`, `"per-minute";r=1;t=60`}[i] {
				t.Errorf("request %d: RateLimit %q", i+1, got)
			}
			if i == 2 && (r.StatusCode != 429 || !strings.Contains(readAll(t, r), `"violated-policies":["tenants.per-minute"]`)) {
				t.Errorf("third: %d, want 429 by tenants.per-minute", r.StatusCode)
			}
		}
	})
}
