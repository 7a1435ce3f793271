package envoy_test

import (
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// Rules envoyproxy/ratelimit loads load: a rate_limit name of any text
// (spaces, '/', ':', or empty, which is no name) and a value written
// empty (value: with nothing after it, no value). A name is echoed in
// current_limit.name and replaced by its text, as written; sluice's
// headers, observers and metrics call its limit by the name made a limit
// name, other bytes replaced by '_' as a path's are.
func TestRulesLoadNamesAndEmptyValuesAsRatelimitDoes(t *testing.T) {
	const rules = `domain: d
descriptors:
  - key: user
    value:
    rate_limit: {unit: minute, requests_per_unit: 5, name: "Per user limit"}
  - key: api
    rate_limit: {unit: minute, requests_per_unit: 7, name: "api/v1:limit", replaces: [{name: "Per user limit"}]}
  - key: plain
    rate_limit: {unit: minute, requests_per_unit: 3, name: ""}
`
	if _, err := envoy.LoadRules("rules.yaml", []byte(rules)); err != nil {
		t.Fatalf("refused rules envoyproxy/ratelimit loads: %v", err)
	}
	h := serve(t, rules, envoy.Options{Headers: httplimit.ModeIETF})
	resp := h.ask(request("d", 0, desc("user", "u1")))
	h.expect(resp, ok, status{code: ok, limit: "Per user limit:5/MINUTE", remaining: 4, reset: statusOf(resp.Statuses[0]).reset})
	if got := policyOf(resp); got != `"Per_user_limit";q=5;w=60` {
		t.Errorf("RateLimit-Policy %q, want the name made a limit name", got)
	}
	resp = h.ask(request("d", 0, desc("user", "u1"), desc("api", "x"), desc("plain", "p")))
	h.expect(resp, ok, status{code: ok}, status{code: ok, limit: "api/v1:limit:7/MINUTE", remaining: 6, reset: statusOf(resp.Statuses[1]).reset},
		status{code: ok, limit: ":3/MINUTE", remaining: 2, reset: statusOf(resp.Statuses[2]).reset})
	if got := policyOf(resp); !strings.Contains(got, `"api_v1_limit";q=7`) || !strings.Contains(got, `"plain";q=3`) {
		t.Errorf("RateLimit-Policy %q, want api_v1_limit and plain", got)
	}
}

// policyOf returns the RateLimit-Policy header of resp, "" without one.
func policyOf(resp *rlsv3.RateLimitResponse) string {
	for _, h := range resp.ResponseHeadersToAdd {
		if h.GetKey() == "RateLimit-Policy" {
			return h.GetValue()
		}
	}
	return ""
}
