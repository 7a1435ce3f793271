package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// A decision API refusal states the wait a refusal through the proxy or
// forward-auth would state in Retry-After: a refused concurrency limit is
// polled (its lease's expiry is only the latest a slot frees), and a rate
// limit refused beside it decides the wait.
func TestDecisionAPIRetryAfterWithConcurrency(t *testing.T) {
	const cfg = `
plans:
  free:
    limits:
      - {name: in-flight, algorithm: concurrency, quantity: %d, window: 5m}
      - {name: per-minute, algorithm: fixed-window, quantity: %d, window: 1m}
`
	type answer struct {
		Allowed      bool              `json:"allowed"`
		Violated     []string          `json:"violated"`
		RetryAfter   int64             `json:"retryAfter"`
		RetryAfterMs int64             `json:"retryAfterMs"`
		Headers      map[string]string `json:"headers"`
	}
	check := func(t *testing.T, f *fixture) answer {
		t.Helper()
		r := f.do(t, "POST", "/v1/check", `{"user":"u1"}`, nil)
		defer r.Body.Close()
		var a answer
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || r.StatusCode != 200 {
			t.Fatalf("%d %v", r.StatusCode, err)
		}
		return a
	}
	eachStore(t, func(t *testing.T, kind string) {
		// Only the concurrency limit refuses: poll.
		f := newFixture(t, fmt.Sprintf(cfg, 1, 100), kind)
		check(t, f)
		f.clock.Advance(10 * time.Second)
		if a := check(t, f); a.Allowed || !slices.Equal(a.Violated, []string{"in-flight"}) || a.RetryAfter != 1 || a.RetryAfterMs != 1000 {
			t.Errorf("concurrency refusal: %+v; want retryAfter 1 (as Retry-After), not the lease's expiry", a)
		}
		// Both refuse: the per-minute window's end decides.
		f = newFixture(t, fmt.Sprintf(cfg, 2, 2), kind)
		check(t, f)
		check(t, f)
		f.clock.Advance(10 * time.Second)
		a := check(t, f)
		if a.Allowed || len(a.Violated) != 2 || a.RetryAfter != 50 || a.RetryAfterMs != 50000 {
			t.Errorf("two refusals: %+v; want retryAfter 50, the per-minute window's end", a)
		}
		// The headers to pass on are those a refusal sends: Retry-After
		// with them.
		if got := a.Headers["Retry-After"]; got != "50" {
			t.Errorf("headers: Retry-After %q, want 50 (%v)", got, a.Headers)
		}
	})
}
