package envoy_test

import (
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

// A peek (hits_addend 0) at a requests_per_unit 0 rule is OK, with nothing
// remaining, until a request hits the rule's descriptor in its Unix window:
// envoyproxy/ratelimit adds 0 to a counter of 0, which is not over 0; a hit
// makes the counter 1, and every answer OVER_LIMIT until the window ends.
func TestAPeekAtABlockedRuleIsOKUntilItIsHit(t *testing.T) {
	h := serve(t, `
domain: d
descriptors:
  - key: blk
    rate_limit: {unit: minute, requests_per_unit: 0}
  - key: a
    rate_limit: {unit: minute, requests_per_unit: 2}
`)
	h.expect(h.ask(request("d", 0, withHits(desc("blk", "x"), 0))), ok, status{ok, ":0/MINUTE", 0, time.Minute})
	// Beside it, a limit its request hits is charged.
	h.expect(h.ask(request("d", 1, withHits(desc("blk", "x"), 0), desc("a", "x"))), ok,
		status{ok, ":0/MINUTE", 0, time.Minute}, status{ok, ":2/MINUTE", 1, time.Minute})
	h.expect(h.ask(request("d", 1, desc("blk", "x"))), over, status{over, ":0/MINUTE", 0, time.Minute})
	h.clock.Advance(10 * time.Second)
	h.expect(h.ask(request("d", 0, withHits(desc("blk", "x"), 0))), over, status{over, ":0/MINUTE", 0, 50 * time.Second})
	// A peek that the hit made OVER_LIMIT refuses its request: the limit
	// beside it is not charged.
	h.expect(h.ask(request("d", 1, withHits(desc("blk", "x"), 0), desc("a", "x"))), over,
		status{over, ":0/MINUTE", 0, 50 * time.Second}, status{ok, ":2/MINUTE", 1, 50 * time.Second})
	// Another value was never hit.
	h.expect(h.ask(request("d", 0, withHits(desc("blk", "y"), 0))), ok, status{ok, ":0/MINUTE", 0, 50 * time.Second})
	// Identical descriptors are counted in turn: a peek before the hit of
	// its request is OK, one after it OVER_LIMIT.
	z := func() *ratelimitv3.RateLimitDescriptor { return withHits(desc("blk", "z"), 0) }
	h.expect(h.ask(request("d", 1, z(), desc("blk", "z"), z())), over,
		status{ok, ":0/MINUTE", 0, 50 * time.Second}, status{over, ":0/MINUTE", 0, 50 * time.Second}, status{over, ":0/MINUTE", 0, 50 * time.Second})
	// The next window starts afresh.
	h.clock.Advance(50 * time.Second)
	h.expect(h.ask(request("d", 0, withHits(desc("blk", "x"), 0))), ok, status{ok, ":0/MINUTE", 0, time.Minute})
}
