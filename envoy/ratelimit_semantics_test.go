package envoy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/envoy"
)

// Weeks, 30-day months and 365-day years are counted in envoyproxy/ratelimit's
// windows, unit-length from the Unix epoch (1970-01-01, a Thursday), not
// from sluice.Epoch. start is Wednesday 2061-12-21 00:00 UTC: its Unix
// week ends the next day, its Unix 30-day window on 2061-12-29, its Unix
// 365-day year on 2062-12-09. The Unix year that holds 2026-12-01 ends on
// 2026-12-18 (sluice's own year, counted from 2020-01-01, on 2026-12-30).
func TestCalendarWindowsAreUnixWindows(t *testing.T) {
	h := serve(t, `
domain: cal
descriptors:
  - key: weekly
    rate_limit: {unit: week, requests_per_unit: 2}
  - key: monthly
    rate_limit: {unit: month, requests_per_unit: 2}
  - key: yearly
    rate_limit: {unit: year, requests_per_unit: 2}
`)
	if got := start.Format(time.RFC3339 + " Monday"); got != "2061-12-21T00:00:00Z Wednesday" {
		t.Fatalf("start is %s", got)
	}
	day := 24 * time.Hour
	for _, c := range []struct {
		key   string
		unit  string
		at    time.Time     // zero: start
		left  time.Duration // to the end of the Unix window holding at
		whole time.Duration
	}{
		{"weekly", "WEEK", time.Time{}, day, 7 * day},
		{"monthly", "MONTH", time.Time{}, 8 * day, 30 * day},
		{"yearly", "YEAR", time.Time{}, 353 * day, 365 * day},
		{"yearly", "YEAR", time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC), 17 * day, 365 * day},
	} {
		at := start
		if !c.at.IsZero() {
			at = c.at
		}
		h.clock.Advance(at.Sub(start))
		d := desc(c.key, at.Format("2006"))
		limit := ":2/" + c.unit
		h.expect(h.ask(request("cal", 0, d)), ok, status{ok, limit, 1, c.left})
		h.expect(h.ask(request("cal", 0, d)), ok, status{ok, limit, 0, c.left})
		h.expect(h.ask(request("cal", 0, d)), over, status{over, limit, 0, c.left})
		h.clock.Advance(c.left - time.Second)
		h.expect(h.ask(request("cal", 0, d)), over, status{over, limit, 0, time.Second})
		h.clock.Advance(time.Second)
		h.expect(h.ask(request("cal", 0, d)), ok, status{ok, limit, 1, c.whole})
		h.clock.Advance(-c.left - at.Sub(start)) // back to start for the next case
	}
}

// A refused request spends what is left of its fixed window and marks it
// over, as envoyproxy/ratelimit counts every hit: a peek (hits_addend 0)
// at it is then OVER_LIMIT, while a peek at a window requests merely
// filled is OK with nothing remaining.
func TestPeekAtAWindowThatWentOver(t *testing.T) {
	h := serve(t, apiRules)
	h.expect(h.ask(request("api", 5, desc("client", "full"))), ok, status{ok, "per-client:5/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("client", "full"), 0))), ok, status{ok, "per-client:5/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 7, desc("client", "over"))), over, status{over, "per-client:5/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("client", "over"), 0))), over, status{over, "per-client:5/MINUTE", 0, time.Minute})
	// Beside another descriptor, the peek refuses the request, which
	// spends nothing (as envoyproxy/ratelimit stops incrementing the others).
	h.expect(h.ask(request("api", 0, withHits(desc("client", "over"), 0), desc("client", "other"))), over,
		status{over, "per-client:5/MINUTE", 0, time.Minute}, status{ok, "per-client:5/MINUTE", 5, time.Minute})
	h.expect(h.ask(request("api", 0, desc("client", "other"))), ok, status{ok, "per-client:5/MINUTE", 4, time.Minute})
	h.clock.Advance(time.Minute)
	h.expect(h.ask(request("api", 0, withHits(desc("client", "over"), 0))), ok, status{ok, "per-client:5/MINUTE", 5, time.Minute})
}

// share_threshold: every value that its wildcard matches counts in one
// limit; without it each value has its own.
func TestShareThreshold(t *testing.T) {
	h := serve(t, `
domain: files
descriptors:
  - key: shared
    value: files/*
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: apart
    value: files/*
    rate_limit: {unit: hour, requests_per_unit: 2}
`)
	h.expect(h.ask(request("files", 0, desc("shared", "files/a.pdf"))), ok, status{ok, ":2/HOUR", 1, time.Hour})
	h.expect(h.ask(request("files", 0, desc("shared", "files/b.csv"))), ok, status{ok, ":2/HOUR", 0, time.Hour})
	h.expect(h.ask(request("files", 0, desc("shared", "files/c"))), over, status{over, ":2/HOUR", 0, time.Hour})
	// A value equal to the pattern itself is a value of its own.
	h.expect(h.ask(request("files", 0, desc("shared", "files/*"))), over, status{over, ":2/HOUR", 0, time.Hour})
	h.expect(h.ask(request("files", 0, desc("apart", "files/a.pdf"))), ok, status{ok, ":2/HOUR", 1, time.Hour})
	h.expect(h.ask(request("files", 0, desc("apart", "files/b.csv"))), ok, status{ok, ":2/HOUR", 1, time.Hour})
}

// quota_mode reports an exhausted limit as OK, with its current limit and
// nothing remaining but no duration_until_reset, and never refuses the
// request; shadow_mode reports it as OK with its duration.
func TestQuotaAndShadowMode(t *testing.T) {
	h := serve(t, `
domain: modes
descriptors:
  - key: quota
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
`)
	for i := range 2 {
		remaining, reset := uint32(0), time.Duration(0)
		if i == 0 {
			reset = time.Minute
		}
		h.expect(h.ask(request("modes", 0, desc("quota", "q"), desc("shadow", "s"))), ok,
			status{ok, ":1/MINUTE", remaining, reset}, status{ok, ":1/MINUTE", 0, time.Minute})
	}
}

func TestRatelimitDescriptorFieldsLoad(t *testing.T) {
	_, err := envoy.LoadRules("r.yaml", []byte(`
domain: d
descriptors:
  - key: a
    value_to_metric: true
    detailed_metric: true
    quota_mode: false
    share_threshold: false
    rate_limit: {unit: second, requests_per_unit: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"  - key: a\n    value: exact\n    share_threshold: true\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
			"r.yaml:5:22: descriptors[0].share_threshold: applies only to a value ending in *"},
		{"  - key: a\n    quota_mode: true\n", "r.yaml:4:17: descriptors[0].quota_mode: has no effect without a rate_limit"},
	} {
		_, err := envoy.LoadRules("r.yaml", []byte("domain: d\ndescriptors:\n"+c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

// A peek that refuses its request, at a window that went over, leaves a
// fixed window of the same request that the request's hits take over its
// limit refused and over, as envoyproxy/ratelimit counts those hits (with
// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT too: it charges the descriptors
// that go over); a window that the hits fit in is neither charged nor
// refused.
func TestAPeekRefusalCountsTheWindowsItsRequestTakesOver(t *testing.T) {
	h := serve(t, apiRules)
	const limit = "per-client:5/MINUTE"
	h.expect(h.ask(request("api", 7, desc("client", "over"))), over, status{over, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 5, desc("client", "full"))), ok, status{ok, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 3, desc("client", "some"))), ok, status{ok, limit, 2, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("client", "over"), 0), desc("client", "full"), withHits(desc("client", "some"), 2))), over,
		status{over, limit, 0, time.Minute}, status{over, limit, 0, time.Minute}, status{ok, limit, 2, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("client", "full"), 0))), over, status{over, limit, 0, time.Minute})
	h.expect(h.ask(request("api", 0, withHits(desc("client", "some"), 0))), ok, status{ok, limit, 2, time.Minute})
}
