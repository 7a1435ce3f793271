package server_test

import (
	"encoding/json"
	"reflect"
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
