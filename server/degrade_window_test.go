package server_test

import "testing"

// A degraded level scales the limits overload is made of — windows up to
// degradation.factor_max_window, an hour by default — and keeps longer
// ones and calendar quotas whole: a refusal under a halved daily quota
// would tell a client to come back tomorrow for an overload of minutes.
func TestReducedLevelKeepsLongQuotasWhole(t *testing.T) {
	const plans = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
      - {name: per-hour, algorithm: gcra, quantity: 100, window: 1h}
      - {name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}
      - {name: per-month, algorithm: fixed-window, quantity: 10000, window: month}
`
	for _, tc := range []struct {
		name, degradation, want string
	}{
		{"default", `
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`, `"per-minute";q=5;w=60, "per-hour";q=50;w=3600, "per-day";q=1000;w=86400, "per-month";q=10000`},
		{"every window", `
degradation:
  factor: 0.5
  factor_max_window: 744h
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`, `"per-minute";q=5;w=60, "per-hour";q=50;w=3600, "per-day";q=500;w=86400, "per-month";q=5000`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, plans+tc.degradation)
			if r := f.do(t, "PUT", "/v1/degradation", `{"level":"elevated"}`, nil); r.StatusCode != 200 {
				t.Fatalf("pin: %d", r.StatusCode)
			}
			r := f.do(t, "GET", "/api/search", "", nil)
			if got := r.Header.Get("RateLimit-Policy"); r.StatusCode != 200 || got != tc.want {
				t.Errorf("elevated: %d, RateLimit-Policy %q, want %q", r.StatusCode, got, tc.want)
			}
		})
	}
}
