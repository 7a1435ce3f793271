package envoy_test

import (
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

// negative marks d as giving its hits back (is_negative_hits).
func negative(d *ratelimitv3.RateLimitDescriptor) *ratelimitv3.RateLimitDescriptor {
	d.IsNegativeHits = true
	return d
}

// envoyproxy/ratelimit (pull request 1140, "implement is_negative_hits in
// rate limit descriptor"; src/utils/utilities.go GetHitsAddends reads
// GetIsNegativeHits beside the hits_addend) takes a descriptor with
// is_negative_hits as hits_addend taken off its window's counter, floored
// at 0, and answers it OK: Envoy gives back units it charged before (a
// request that failed, a reservation larger than what was used). sluice
// gives back at most what the window counted, so a caller never holds
// more than the limit.
func TestNegativeHitsGiveBackWhatTheWindowCounted(t *testing.T) {
	h := serve(t, apiRules)
	const limit = "per-client:5/MINUTE"
	h.expect(h.ask(request("api", 3, desc("client", "c"))), ok, status{ok, limit, 2, time.Minute})
	h.expect(h.ask(request("api", 0, negative(withHits(desc("client", "c"), 2)))), ok, status{ok, limit, 4, time.Minute})
	for want := uint32(3); ; want-- {
		h.expect(h.ask(request("api", 0, desc("client", "c"))), ok, status{ok, limit, want, time.Minute})
		if want == 0 {
			break
		}
	}
	h.expect(h.ask(request("api", 0, desc("client", "c"))), over, status{over, limit, 0, time.Minute})

	// More than was counted gives back what was: the limit, never more.
	h.expect(h.ask(request("api", 0, desc("client", "d"))), ok, status{ok, limit, 4, time.Minute})
	h.expect(h.ask(request("api", 0, negative(withHits(desc("client", "d"), 100)))), ok, status{ok, limit, 5, time.Minute})
	h.expect(h.ask(request("api", 5, desc("client", "d"))), ok, status{ok, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 0, desc("client", "d"))), over, status{over, limit, 0, time.Minute})

	// Without a hits_addend of its own, the request's (0 or unset: 1).
	h.expect(h.ask(request("api", 2, desc("client", "e"))), ok, status{ok, limit, 3, time.Minute})
	h.expect(h.ask(request("api", 0, negative(desc("client", "e")))), ok, status{ok, limit, 4, time.Minute})
	h.expect(h.ask(request("api", 2, negative(desc("client", "e")))), ok, status{ok, limit, 5, time.Minute})

	// What a window counted ends with it: the next one starts whole.
	h.expect(h.ask(request("api", 4, desc("client", "f"))), ok, status{ok, limit, 1, time.Minute})
	h.clock.Advance(time.Minute)
	h.expect(h.ask(request("api", 0, negative(withHits(desc("client", "f"), 4)))), ok, status{ok, limit, 5, time.Minute})
	h.expect(h.ask(request("api", 5, desc("client", "f"))), ok, status{ok, limit, 0, time.Minute})
}

// A descriptor giving hits back is OK whatever its window holds, and
// refuses no request: beside a descriptor that is over, the request is
// OVER_LIMIT for that one alone, and the units still come back.
func TestNegativeHitsNeverRefuse(t *testing.T) {
	h := serve(t, apiRules)
	const limit = "per-client:5/MINUTE"
	h.expect(h.ask(request("api", 5, desc("client", "full"))), ok, status{ok, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 0, desc("client", "g"))), ok, status{ok, limit, 4, time.Minute})
	h.expect(h.ask(request("api", 0, desc("client", "full"), negative(desc("client", "g")))), over,
		status{over, limit, 0, time.Minute}, status{ok, limit, 5, time.Minute})
	h.expect(h.ask(request("api", 5, desc("client", "g"))), ok, status{ok, limit, 0, time.Minute})
}

// A window that went over (a request refused by it) gives nothing back:
// envoyproxy/ratelimit counted every refused hit past the limit, which
// sluice does not count (it keeps the window full and marked over), so
// sluice cannot tell how much of a give-back envoyproxy/ratelimit would
// keep below its limit; giving none back, it refuses until the window ends
// rather than admit what envoyproxy/ratelimit might refuse. A
// requests_per_unit 0 rule, whose hits are all over it, gives nothing back
// either, and its give-back is not a hit.
func TestNegativeHitsOfAWindowThatWentOverGiveNothingBack(t *testing.T) {
	h := serve(t, apiRules+`
  - key: banned
    rate_limit: {unit: minute, requests_per_unit: 0}
`)
	const limit = "per-client:5/MINUTE"
	h.expect(h.ask(request("api", 7, desc("client", "over"))), over, status{over, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 0, negative(withHits(desc("client", "over"), 3)))), ok, status{ok, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 0, desc("client", "over"))), over, status{over, limit, 0, time.Minute})

	h.expect(h.ask(request("api", 0, negative(desc("banned", "x")))), ok, status{ok, ":0/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("banned", "x"), 0))), ok, status{ok, ":0/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, desc("banned", "x"))), over, status{over, ":0/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, negative(desc("banned", "x")))), ok, status{ok, ":0/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("banned", "x"), 0))), over, status{over, ":0/MINUTE", 0, time.Minute})
}

// Under sluice's other algorithms (an extension of the rules) nothing is
// given back: a bucket keeps no count to take units from (see
// sluice.Refunder), and a sliding window would give back units counted
// in windows that envoyproxy/ratelimit no longer counts. The descriptor is
// OK with what its limit holds.
func TestNegativeHitsOfOtherAlgorithmsGiveNothingBack(t *testing.T) {
	h := serve(t, `
domain: api
descriptors:
  - key: bucket
    rate_limit: {name: per-bucket, unit: minute, requests_per_unit: 5, algorithm: token-bucket}
`)
	h.expect(h.ask(request("api", 5, desc("bucket", "b"))), ok, status{ok, "per-bucket:5/MINUTE", 0, time.Minute})
	resp := h.ask(request("api", 0, negative(withHits(desc("bucket", "b"), 5))))
	if resp.OverallCode != ok || statusOf(resp.Statuses[0]).remaining != 0 {
		t.Errorf("a give-back to a token bucket: %v", resp)
	}
	if resp := h.ask(request("api", 0, desc("bucket", "b"))); resp.OverallCode != over {
		t.Errorf("the bucket after a give-back: %v, want OVER_LIMIT", resp)
	}
}

// A week, month or year is counted in a sluice window that holds its Unix
// window: units go back to it all the same.
func TestNegativeHitsGiveBackToCalendarWindows(t *testing.T) {
	h := serve(t, `
domain: cal
descriptors:
  - key: weekly
    rate_limit: {unit: week, requests_per_unit: 5}
  - key: yearly
    rate_limit: {unit: year, requests_per_unit: 5}
`)
	day := 24 * time.Hour
	for _, c := range []struct {
		key, unit string
		left      time.Duration
	}{{"weekly", "WEEK", day}, {"yearly", "YEAR", 353 * day}} {
		limit := ":5/" + c.unit
		h.expect(h.ask(request("cal", 4, desc(c.key, "k"))), ok, status{ok, limit, 1, c.left})
		h.expect(h.ask(request("cal", 0, negative(withHits(desc(c.key, "k"), 3)))), ok, status{ok, limit, 4, c.left})
		h.expect(h.ask(request("cal", 4, desc(c.key, "k"))), ok, status{ok, limit, 0, c.left})
		h.expect(h.ask(request("cal", 0, desc(c.key, "k"))), over, status{over, limit, 0, c.left})
	}
}
