package envoy_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// A peek at a requests_per_unit 0 rule that no request hit is no limit of
// the request's headers: draft-6's RateLimit-* name the limit beside it,
// as they would without the peek.
func TestAPeekAtABlockedRuleLeavesTheHeadersToTheOtherLimits(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: blk
    rate_limit: {name: blk, unit: minute, requests_per_unit: 0}
  - key: a
    rate_limit: {name: a, unit: minute, requests_per_unit: 5}
`, envoy.Options{Headers: httplimit.ModeDraft6})
	resp := h.ask(request("d", 1, withHits(desc("blk", "x"), 0), desc("a", "x")))
	want := "RateLimit-Limit: 5\nRateLimit-Remaining: 4\nRateLimit-Reset: 60\nRateLimit-Policy: 5;w=60\n"
	if got := headerText(resp.ResponseHeadersToAdd); resp.OverallCode != ok || got != want {
		t.Errorf("%v with headers\n%s\nwant OK with\n%s", resp.OverallCode, got, want)
	}
}
