package server_test

import (
	"encoding/json"
	"testing"
	"time"
)

// A refused check's "limit", "remaining" and "resetAfterMs" are the
// figures of the limit whose wait its retryAfter and headers state (the
// violated limit the longest wait is owed to, a concurrency limit's
// counting as its one-second poll): refused by a full concurrency limit
// and a per-minute limit 50 s before its window ends, they are the
// per-minute limit's, as the draft-6 headers are, not the concurrency
// lease's expiry minutes away.
func TestDecisionAPINamesTheLimitWhoseWaitIsTold(t *testing.T) {
	const cfg = `
response:
  headers: [draft-6]
plans:
  free:
    limits:
      - {name: in-flight, algorithm: concurrency, quantity: 2, window: 5m}
      - {name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}
`
	type answer struct {
		Allowed      bool              `json:"allowed"`
		Limit        string            `json:"limit"`
		Remaining    int64             `json:"remaining"`
		ResetAfterMs int64             `json:"resetAfterMs"`
		Violated     []string          `json:"violated"`
		RetryAfter   int64             `json:"retryAfter"`
		Headers      map[string]string `json:"headers"`
	}
	f := newFixture(t, cfg)
	check := func() answer {
		r := f.do(t, "POST", "/v1/check", `{"user":"u1"}`, nil)
		defer r.Body.Close()
		var a answer
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || r.StatusCode != 200 {
			t.Fatalf("%d %v", r.StatusCode, err)
		}
		return a
	}
	check()
	check()
	f.clock.Advance(10 * time.Second)
	a := check()
	if a.Allowed || len(a.Violated) != 2 || a.RetryAfter != 50 {
		t.Fatalf("setup: %+v", a)
	}
	if a.Limit != "per-minute" || a.Remaining != 0 || a.ResetAfterMs > 50000 || a.Headers["Ratelimit-Reset"] != "50" {
		t.Errorf("refused with retryAfter %d (per-minute's wait) and headers %v, but limit %q, remaining %d, resetAfterMs %d",
			a.RetryAfter, a.Headers, a.Limit, a.Remaining, a.ResetAfterMs)
	}
}

// A check whose cost a concurrency limit can never hold (3 slots asked of
// a limit of 2) is refused with no wait that helps: no retryAfter, no
// retryAfterMs and no Retry-After header (docs/api.md: absent when the
// cost exceeds a limit's capacity), rather than a poll every second,
// forever.
func TestDecisionAPICostAboveConcurrencyCapacityHasNoRetryAfter(t *testing.T) {
	const cfg = `
plans:
  free:
    limits:
      - {name: in-flight, algorithm: concurrency, quantity: 2, window: 5m}
`
	f := newFixture(t, cfg)
	r := f.do(t, "POST", "/v1/check", `{"user":"u1","cost":3}`, nil)
	defer r.Body.Close()
	var a struct {
		Allowed      bool              `json:"allowed"`
		RetryAfter   int64             `json:"retryAfter"`
		RetryAfterMs int64             `json:"retryAfterMs"`
		Limits       []map[string]any  `json:"limits"`
		Headers      map[string]string `json:"headers"`
	}
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil || r.StatusCode != 200 {
		t.Fatalf("%d %v", r.StatusCode, err)
	}
	if a.Allowed {
		t.Fatalf("a cost of 3 admitted by a concurrency limit of 2: %+v", a)
	}
	if a.RetryAfter != 0 || a.RetryAfterMs != 0 || a.Headers["Retry-After"] != "" {
		t.Errorf("cost 3 can never fit 2 slots, yet retryAfter %d, retryAfterMs %d, Retry-After %q (limits %v)",
			a.RetryAfter, a.RetryAfterMs, a.Headers["Retry-After"], a.Limits)
	}
}
