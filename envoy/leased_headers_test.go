package envoy_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// A token bucket of 100 a minute that the store leases admits at most its
// shared burst at once, 75 (it holds back what refills in a lease's life,
// 15 s), which refills in 45 s: with StateLeases its headers state
// q=75;w=45. A bucket the store does not lease, and a fixed window, state
// their own figures, and every status's current_limit stays the rule's.
func TestALeasedBucketRuleStatesItsSharedBurst(t *testing.T) {
	const rules = `
domain: edge
descriptors:
  - key: bucket
    rate_limit: {name: leased, unit: minute, requests_per_unit: 100, algorithm: token-bucket}
  - key: own
    rate_limit: {name: own, unit: hour, requests_per_unit: 100, algorithm: token-bucket}
  - key: window
    rate_limit: {name: window, unit: minute, requests_per_unit: 100}
`
	leased, err := envoy.LoadRules("rules.yaml", []byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	leased.StateLeases(func(id string) bool { return id != "rule.token-bucket.3600s" }, 0)
	h := serve(t, rules, envoy.Options{Headers: httplimit.ModeIETF})
	h.svc.SetRules(leased)
	resp := h.ask(request("edge", 1, desc("bucket", "b"), desc("own", "o"), desc("window", "w")))
	got := headerText(resp.ResponseHeadersToAdd)
	want := `RateLimit-Policy: "leased";q=75;w=45, "own";q=100;w=3600, "window";q=100;w=60`
	if len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("headers\n%s\nwant them to begin\n%s", got, want)
	}
	for i, st := range resp.Statuses {
		if n := st.GetCurrentLimit().GetRequestsPerUnit(); n != 100 {
			t.Errorf("status %d: current_limit %d requests per unit, want the rule's 100", i, n)
		}
	}
}
