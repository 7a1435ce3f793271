package server_test

import (
	"net/http"
	"testing"
	"time"
)

// A degraded level never makes a request one that can never pass: the
// reduced limits are floored at a plan's costliest endpoint, and the
// decision API's caller may give a larger cost, which a reduced limit
// cannot hold at all. Such a check is decided by the configured limits: a
// check of cost 8 under a limit of 10 halved to 5 at level 1 is admitted,
// where it was refused with no retryAfter ("no wait will do") for as long
// as the level lasted.
func TestADegradedLevelLeavesACostItsLimitsCannotHoldToTheConfiguredOnes(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
default_plan: free
degradation:
  levels:
    elevated: {enter: {in_flight: 1000}}
`)
	if a := f.check(t, `{"subject":"first","cost":8}`); !a.Allowed {
		t.Fatalf("at the normal level: %+v", a)
	}
	f.pin(t, "elevated")
	a := f.check(t, `{"subject":"second","cost":8}`)
	if !a.Allowed {
		t.Errorf("a fresh client's check of cost 8 under a limit of 10, at level 1: refused, retryAfterMs %d, violated %v, limits %+v",
			a.RetryAfterMs, a.Violated, a.Limits)
	}
}

// The penalty box counts only refusals of the client's own doing
// (docs/rules.md): not the global limits', which are the service's
// capacity, nor a degraded level's reduced limits', which are too. A
// client that sends 8 requests a minute under a plan of 10 while level 1
// halves it to 5 is refused 3 of them, and is not boxed: 2 minutes later,
// at the normal level, it is served (it was refused for penalty.for, 10
// minutes, before).
func TestRefusalsByReducedLimitsPutNoOneInThePenaltyBox(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
default_plan: free
anonymous_plan: free
penalty: {refusals: 3, within: 1m, for: 10m}
degradation:
  levels:
    elevated: {enter: {in_flight: 1000}}
`)
	f.pin(t, "elevated")
	codes := ""
	for range 8 {
		r := f.do(t, "GET", "/api/items", "", nil)
		readAll(t, r)
		codes += " " + http.StatusText(r.StatusCode)
	}
	f.pin(t, "normal")
	f.clock.Advance(2 * time.Minute) // a new window: the plan's whole 10 again
	r := f.do(t, "GET", "/api/items", "", nil)
	if body := readAll(t, r); r.StatusCode != http.StatusOK {
		t.Errorf("8 requests a minute under a plan of 10, during level 1 (%s), then 2 minutes later at the normal level: %d %s",
			codes, r.StatusCode, body)
	}
}
