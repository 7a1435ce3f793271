package server_test

import "testing"

// sluice_caller_refusals_total has a series for each scope from the start,
// at 0, so that a panel or an alert on its rate reads 0 rather than
// nothing before the first refusal.
func TestCallerRefusalsStartAtZeroForEachScope(t *testing.T) {
	f := newFixture(t, testConfig, "memory")
	m := scrape(t, f.admin.URL)
	for _, scope := range []string{"read", "check", "override_plan", "admin"} {
		v, ok := m[`sluice_caller_refusals_total{scope="`+scope+`"}`]
		if !ok || v != 0 {
			t.Errorf("sluice_caller_refusals_total{scope=%q} = %v (present %v), want 0 from the start", scope, v, ok)
		}
	}
}
