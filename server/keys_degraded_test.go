package server_test

import "testing"

// While degraded, GET /v1/keys/{subject} reads a client's state under the
// reduced limits its requests are decided by: an operator who inspects a
// refused client in an incident must not read that it has quota left.
func TestKeysInspectReadsTheReducedLimitsWhileDegraded(t *testing.T) {
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
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"elevated"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin: %d", r.StatusCode)
	}
	for range 5 {
		if r := f.do(t, "POST", "/v1/check", `{"subject":"s"}`, nil); r.StatusCode != 200 {
			t.Fatalf("check: %d", r.StatusCode)
		}
	}
	var state struct {
		Limits []struct {
			Name      string `json:"name"`
			Quantity  int64  `json:"quantity"`
			Remaining int64  `json:"remaining"`
		} `json:"limits"`
	}
	decode(t, f.do(t, "GET", "/v1/keys/ext:s", "", nil), &state)
	if len(state.Limits) != 1 || state.Limits[0].Quantity != 5 || state.Limits[0].Remaining != 0 {
		t.Fatalf("inspect at elevated: %+v, want per-minute of 5 with 0 remaining (5 spent of the reduced 5)", state)
	}
}
