package envoy_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// A peek at a requests_per_unit 0 rule that no request hit is OK with 0
// remaining of 0: draft-6's RateLimit-* describe it, as
// envoyproxy/ratelimit's describe the least remaining.
func TestAPeekAtABlockedRuleIsTheLeastRemaining(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: blk
    rate_limit: {name: blk, unit: minute, requests_per_unit: 0}
  - key: a
    rate_limit: {name: a, unit: minute, requests_per_unit: 5}
`, envoy.Options{Headers: httplimit.ModeDraft6})
	resp := h.ask(request("d", 1, withHits(desc("blk", "x"), 0), desc("a", "x")))
	want := "RateLimit-Limit: 0\nRateLimit-Remaining: 0\nRateLimit-Reset: 60\nRateLimit-Policy: 0;w=60\n"
	if got := headerText(resp.ResponseHeadersToAdd); resp.OverallCode != ok || got != want {
		t.Errorf("%v with headers\n%s\nwant OK with\n%s", resp.OverallCode, got, want)
	}
}
