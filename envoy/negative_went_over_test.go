package envoy_test

import (
	"testing"
	"time"
)

// A give-back (is_negative_hits) gives nothing back to a fixed window that
// its own request went over: the window keeps refusing until it ends (docs/envoy.md), and the
// give-back reports limit_remaining 0, what the window holds once the
// refusal spent it. envoyproxy/ratelimit counts the refused hit (5+1) and
// takes 1 off (5): its next hit is 6 > 5, OVER_LIMIT.
func TestAGiveBackGivesNothingToTheWindowItsRequestWentOver(t *testing.T) {
	const limit = "per-client:5/MINUTE"
	t.Run("a full window", func(t *testing.T) {
		h := serve(t, apiRules)
		h.expect(h.ask(request("api", 5, desc("client", "c"))), ok, status{ok, limit, 0, time.Minute})
		h.expect(h.ask(request("api", 0, desc("client", "c"), negative(desc("client", "c")))), over,
			status{over, limit, 0, time.Minute}, status{ok, limit, 0, time.Minute})
		h.expect(h.ask(request("api", 0, desc("client", "c"))), over, status{over, limit, 0, time.Minute})
	})
	t.Run("a hit above what is left", func(t *testing.T) {
		// 3 counted, a hit of 3 refused (6 > 5), then 2 given back: the
		// window that went over stays over (envoyproxy/ratelimit's counter
		// is then 4, which sluice, not counting the refused hit, cannot
		// tell from 5 or more).
		h := serve(t, apiRules)
		h.expect(h.ask(request("api", 3, desc("client", "c"))), ok, status{ok, limit, 2, time.Minute})
		h.expect(h.ask(request("api", 0, withHits(desc("client", "c"), 3), negative(withHits(desc("client", "c"), 2)))), over,
			status{over, limit, 0, time.Minute}, status{ok, limit, 0, time.Minute})
		h.expect(h.ask(request("api", 0, desc("client", "c"))), over, status{over, limit, 0, time.Minute})
		h.expect(h.ask(request("api", 0, withHits(desc("client", "c"), 0))), over, status{over, limit, 0, time.Minute})
	})
	t.Run("a request refused by another limit", func(t *testing.T) {
		// The window the give-back goes to did not go over: it gets its
		// unit back.
		h := serve(t, apiRules+`
  - key: tenant
    rate_limit: {unit: minute, requests_per_unit: 1}
`)
		h.expect(h.ask(request("api", 3, desc("client", "c"))), ok, status{ok, limit, 2, time.Minute})
		h.ask(request("api", 0, desc("tenant", "t")))
		h.expect(h.ask(request("api", 0, desc("tenant", "t"), desc("client", "c"), negative(desc("client", "c")))), over)
		h.expect(h.ask(request("api", 0, withHits(desc("client", "c"), 0))), ok, status{ok, limit, 3, time.Minute})
	})
}
