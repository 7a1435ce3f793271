package server_test

import "testing"

// shedRoundConfig sheds POST /api/generate from level 1 and tells the
// client to come back after 1.4 s.
const shedRoundConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
degradation:
  retry_after: 1400ms
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
  classes:
    expensive: ["POST /api/generate"]
`

// A shed request's Retry-After is degradation.retry_after rounded up to
// whole seconds, so that a client that waits it is never early (1.4 s is
// 2, not 1), on every surface: the proxy's 503, forward-auth's refusal,
// and the decision API's retryAfter and headers; the decision API's
// retryAfterMs is the exact wait (1400).
func TestShedRetryAfterRoundsUp(t *testing.T) {
	f := newFixture(t, shedRoundConfig)
	f.pin(t, "elevated")
	_, m, _ := postCheck(t, f, `{"user":"u","method":"POST","path":"/api/generate"}`)
	if m["level"] == nil {
		t.Fatalf("not shed: %v", m)
	}
	hs, _ := m["headers"].(map[string]any)
	if m["retryAfter"] != float64(2) || m["retryAfterMs"] != float64(1400) || hs["Retry-After"] != "2" {
		t.Errorf("retry_after 1400ms told as retryAfter %v, retryAfterMs %v, headers %v; want 2, 1400 and Retry-After 2", m["retryAfter"], m["retryAfterMs"], hs)
	}
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/generate"})
	readAll(t, r)
	if r.Header.Get("Retry-After") != "2" {
		t.Errorf("forward-auth shed: %d Retry-After %q, want 2", r.StatusCode, r.Header.Get("Retry-After"))
	}
	r = f.do(t, "POST", "/api/generate", "", nil)
	readAll(t, r)
	if r.StatusCode != 503 || r.Header.Get("Retry-After") != "2" {
		t.Errorf("proxy shed: %d Retry-After %q, want 503 and 2", r.StatusCode, r.Header.Get("Retry-After"))
	}
}
