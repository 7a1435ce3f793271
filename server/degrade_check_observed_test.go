package server_test

import (
	"strings"
	"testing"
)

// At a degraded level, a decision API check whose cost (3) no reduced
// limit can hold (a limit of 4 halved to 2) is decided by the configured
// limits (decideAt) and admitted: one check, one decision observed. No
// refusal at the reduced limits is counted beside it — none in
// sluice_decisions_total{result="limited"}, on the dashboard, or among
// GET /v1/keys' most refused subjects: no one received one.
func TestACheckDecidedByTheConfiguredLimitsIsObservedOnce(t *testing.T) {
	f := newFixture(t, `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 4, window: 1m}
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 2000}, leave: {in_flight: 1200}}
`)
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":1}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin level 1: %d %s", r.StatusCode, readAll(t, r))
	}
	st, m, raw := postCheck(t, f, `{"user":"u","cost":3}`)
	if st != 200 || m["allowed"] != true {
		t.Fatalf("check of cost 3 at level 1: %d %s; want allowed by the configured limit of 4", st, raw)
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	allowed := 0
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, "sluice_decisions_total{") {
			continue
		}
		switch {
		case strings.Contains(line, `result="limited"`) && !strings.HasSuffix(line, " 0"):
			t.Errorf("one admitted check: %s; want no refusal counted", line)
		case strings.Contains(line, `result="allowed"`) && strings.HasSuffix(line, " 1"):
			allowed++
		}
	}
	if allowed != 1 {
		t.Errorf("one admitted check: %d lines of sluice_decisions_total{result=\"allowed\"} at 1; want 1", allowed)
	}
	if top := strings.TrimSpace(readAll(t, f.do(t, "GET", "/v1/keys", "", nil))); top != "[]" {
		t.Errorf("GET /v1/keys after one admitted check: %s; want [] (no one was refused)", top)
	}
}
