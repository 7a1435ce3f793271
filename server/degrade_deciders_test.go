package server_test

import (
	"strings"
	"testing"
)

// A degraded level's reduced limits are the limits of every way a request
// is decided, not of the reverse proxy alone: an operator who pins
// "elevated" in an incident halves the limits that forward-auth and the
// decision API decide with too.
func TestReducedLevelLimitsForwardAuthAndTheDecisionAPI(t *testing.T) {
	const cfg = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`
	f := newFixture(t, cfg)
	check := func(level, want string) {
		t.Helper()
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/search"})
		if got := r.Header.Get("RateLimit-Policy"); r.StatusCode != 200 || got != want {
			t.Errorf("%s: forward-auth %d, RateLimit-Policy %q, want %q", level, r.StatusCode, got, want)
		}
		r = f.do(t, "POST", "/v1/check", `{"subject":"s","method":"GET","path":"/api/search"}`, nil)
		if body := readAll(t, r); r.StatusCode != 200 || !strings.Contains(body, strings.ReplaceAll(want, `"`, `\"`)) {
			t.Errorf("%s: decision API %d %s, want RateLimit-Policy %s", level, r.StatusCode, body, want)
		}
	}
	check("normal", `"per-minute";q=10;w=60`)
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"elevated"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin: %d", r.StatusCode)
	}
	check("elevated", `"per-minute";q=5;w=60`)
}
