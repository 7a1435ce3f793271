package sim

import "testing"

// A rule of an endpoint's limit is sized for every client it covers: the
// clients of each plan without a limit of its own on the route, the
// internal callers' and the anonymous plan's included.
func TestDesignAPIRuleCountsEveryClientItCovers(t *testing.T) {
	a := designAPI(t, `
identity: {api_keys: true, anonymous: free}
plans:
  - {name: free, clients: 1000, limits: [{rate: 20/1s}]}
  - {name: pro, clients: 500, limits: [{rate: 50/1s}]}
endpoints:
  - {route: "GET /api/report", limit: 60/1h, limits: {free: 5/1h}}
internal:
  - {name: billing-batch, rate: 50/1s}
`)
	want := map[string]int64{"get-api-report": 500 + 1, "get-api-report-free": 1000}
	for _, r := range a.Rules {
		if got := r.Limit.Analysis.Requirements.Keys; got != want[r.Name] {
			t.Errorf("rule %s (plans %v) sized for %d clients, want %d", r.Name, r.Plans, got, want[r.Name])
		}
	}
	if len(a.Rules) != len(want) {
		t.Errorf("%d rules, want %d", len(a.Rules), len(want))
	}
}
