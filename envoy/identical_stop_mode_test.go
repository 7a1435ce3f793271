package envoy_test

import (
	"testing"
	"time"
)

// A request that is over only because identical descriptors together do
// not fit a window that each alone fits is refused all or nothing: its
// other descriptors are not charged, and the window gone over stays over.
// This is where sluice and envoyproxy/ratelimit with
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT differ (docs/envoy.md, "The one
// deliberate difference"): that mode tells whether to charge from each
// descriptor's own cost against the count before the request
// (fixed_cache_impl.go), so with x at 1 of 2 it answers [x, x, y] the
// same but charges y (9 left of 10).
func TestIdenticalDescriptorsOverTogetherChargeNoneOfTheOthers(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: x
    rate_limit: {unit: minute, requests_per_unit: 2, name: x}
  - key: y
    rate_limit: {unit: minute, requests_per_unit: 10, name: y}
`)
	h.expect(h.ask(request("d", 0, desc("x", "1"))), ok, status{ok, "x:2/MINUTE", 1, time.Minute})
	h.expect(h.ask(request("d", 0, desc("x", "1"), desc("x", "1"), desc("y", "1"))), over,
		status{ok, "x:2/MINUTE", 0, time.Minute},
		status{over, "x:2/MINUTE", 0, time.Minute},
		status{ok, "y:10/MINUTE", 10, time.Minute})
	h.expect(h.ask(request("d", 0, withHits(desc("x", "1"), 0), withHits(desc("y", "1"), 0))), over,
		status{over, "x:2/MINUTE", 0, time.Minute},
		status{ok, "y:10/MINUTE", 10, time.Minute})
}
