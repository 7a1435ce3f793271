package envoy_test

import (
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
)

// overriddenPerMinute is a descriptor of entries kv with Envoy's limit override of
// n per minute.
func overriddenPerMinute(n uint32, kv ...string) *ratelimitv3.RateLimitDescriptor {
	d := desc(kv...)
	d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: n, Unit: typev3.RateLimitUnit_MINUTE}
	return d
}

// Limit overrides of one window are one name in the IETF headers
// (override-per-minute), however many descriptors carry them and whatever
// their quantities: the headers name a limit once, with the figures of the
// descriptor closest to refusing (docs/envoy.md), as for a configured rule
// (TestOneRuleIsNamedOnceInTheIETFHeaders): a client that keys RateLimit
// items by name could otherwise keep the one farther from refusing.
func TestOverrideLimitIsNamedOnceInTheIETFHeaders(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 100}
`, envoy.Options{Headers: httplimit.ModeIETF})
	a, b := overriddenPerMinute(5, "user", "a"), overriddenPerMinute(5, "user", "b")
	for range 3 {
		h.ask(request("d", 0, b))
	}
	got := headerText(h.ask(request("d", 0, a, b)).ResponseHeadersToAdd)
	want := `RateLimit-Policy: "override-per-minute";q=5;w=60
RateLimit: "override-per-minute";r=1;t=60
`
	if got != want {
		t.Errorf("headers\n%s\nwant\n%s", got, want)
	}

	// Of two quantities, the one closest to refusing: b's 5th of 5 (0
	// left) against c's 1st of 10 (9 left).
	got = headerText(h.ask(request("d", 0, overriddenPerMinute(10, "user", "c"), overriddenPerMinute(5, "user", "b"))).ResponseHeadersToAdd)
	want = `RateLimit-Policy: "override-per-minute";q=5;w=60
RateLimit: "override-per-minute";r=0;t=60
`
	if got != want {
		t.Errorf("overrides of 10 and 5 per minute: headers\n%s\nwant\n%s", got, want)
	}
}
