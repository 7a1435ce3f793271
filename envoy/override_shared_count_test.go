package envoy_test

import (
	"testing"
	"time"
)

// Identical descriptors with limit overrides of one window but different
// quantities count in one count, as envoyproxy/ratelimit counts them in
// one counter, and each is decided against its own limit, in turn: with n
// counted before the request, the i-th is OVER_LIMIT when n plus its cost
// and those of the ones before it is above its quantity, and the request
// is refused (spending nothing) when any of them is. Each status reports
// what its own limit holds after it.
func TestIdenticalDescriptorsOfDifferentOverridesShareOneCountEachAgainstItsOwn(t *testing.T) {
	const rules = `
domain: d
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 1000}
`
	t.Run("the stricter second", func(t *testing.T) {
		h := serve(t, rules)
		for i := 1; i <= 5; i++ {
			h.expect(h.ask(request("d", 0, overriddenPerMinute(20, "user", "a"), overriddenPerMinute(10, "user", "a"))), ok,
				status{ok, ":20/MINUTE", uint32(20 - 2*i + 1), time.Minute}, status{ok, ":10/MINUTE", uint32(10 - 2*i), time.Minute})
		}
		// 11 ≤ 20, then 12 > 10.
		h.expect(h.ask(request("d", 0, overriddenPerMinute(20, "user", "a"), overriddenPerMinute(10, "user", "a"))), over,
			status{ok, ":20/MINUTE", 9, time.Minute}, status{over, ":10/MINUTE", 0, time.Minute})
		// The 20 per minute alone still has room.
		h.expect(h.ask(request("d", 0, overriddenPerMinute(20, "user", "a"))), ok, status{ok, ":20/MINUTE", 9, time.Minute})
	})
	t.Run("the stricter first", func(t *testing.T) {
		h := serve(t, rules)
		h.expect(h.ask(request("d", 8, overriddenPerMinute(20, "user", "a"))), ok, status{ok, ":20/MINUTE", 12, time.Minute})
		// 9 ≤ 10, then 10 ≤ 20.
		h.expect(h.ask(request("d", 0, overriddenPerMinute(10, "user", "a"), overriddenPerMinute(20, "user", "a"))), ok,
			status{ok, ":10/MINUTE", 1, time.Minute}, status{ok, ":20/MINUTE", 10, time.Minute})
		// 11 > 10, then 12 ≤ 20.
		h.expect(h.ask(request("d", 0, overriddenPerMinute(10, "user", "a"), overriddenPerMinute(20, "user", "a"))), over,
			status{over, ":10/MINUTE", 0, time.Minute}, status{ok, ":20/MINUTE", 8, time.Minute})
	})
	t.Run("a count already past the stricter", func(t *testing.T) {
		h := serve(t, rules)
		h.expect(h.ask(request("d", 15, overriddenPerMinute(20, "user", "a"))), ok, status{ok, ":20/MINUTE", 5, time.Minute})
		// 16 ≤ 20, then 17 > 10.
		h.expect(h.ask(request("d", 0, overriddenPerMinute(20, "user", "a"), overriddenPerMinute(10, "user", "a"))), over,
			status{ok, ":20/MINUTE", 4, time.Minute}, status{over, ":10/MINUTE", 0, time.Minute})
	})
}

// The IETF headers name such overrides once (override-per-minute), with
// the quantity and what remains of the one closest to refusing.
func TestIdenticalDescriptorsOfDifferentOverridesShowTheStricterInTheIETFHeaders(t *testing.T) {
	h := serve(t, "domain: d\ndescriptors:\n  - key: user\n    rate_limit: {unit: hour, requests_per_unit: 1000}\n")
	resp := h.ask(request("d", 0, overriddenPerMinute(20, "user", "a"), overriddenPerMinute(10, "user", "a")))
	if got, want := headerText(resp.ResponseHeadersToAdd),
		"RateLimit-Policy: \"override-per-minute\";q=10;w=60\nRateLimit: \"override-per-minute\";r=8;t=60\n"; got != want {
		t.Errorf("headers:\n%s\nwant\n%s", got, want)
	}
}
