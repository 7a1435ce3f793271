package envoy_test

import (
	"testing"
	"time"
)

// A descriptor without a value whose key ends in "*" is, in
// envoyproxy/ratelimit's configuration, a wildcard like a value ending in
// "*": its lookup matches the pattern against the entry's key, "_" and
// value as one string, in file order with the wildcard values, after an
// exact key and value and before a key without a value. So key: user*
// limits user_id = 42 and user = x, each value in a limit of its own.
func TestAKeyEndingInAStarIsAWildcard(t *testing.T) {
	h := serve(t, `
domain: keys
descriptors:
  - key: user_id
    value: admin
    rate_limit: {unit: minute, requests_per_unit: 9}
  - key: user*
    rate_limit: {name: users, unit: minute, requests_per_unit: 2}
  - key: user_id
    rate_limit: {name: unreached, unit: minute, requests_per_unit: 7}
  - key: team
    rate_limit: {name: teams, unit: minute, requests_per_unit: 3}
  - key: org_a*
    rate_limit: {name: orgs, unit: minute, requests_per_unit: 4}
`)
	users := status{ok, "users:2/MINUTE", 1, time.Minute}
	h.expect(h.ask(request("keys", 1, desc("user_id", "42"))), ok, users)
	h.expect(h.ask(request("keys", 1, desc("user", "x"))), ok, users)
	h.expect(h.ask(request("keys", 1, desc("user_id", "42"))), ok, status{ok, "users:2/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("keys", 1, desc("user_id", "43"))), ok, users) // a limit of its own
	h.expect(h.ask(request("keys", 1, desc("user_id", "admin"))), ok, status{ok, ":9/MINUTE", 8, time.Minute})
	h.expect(h.ask(request("keys", 1, desc("team", "a"))), ok, status{ok, "teams:3/MINUTE", 2, time.Minute})
	h.expect(h.ask(request("keys", 1, desc("use", "x"))), ok, status{ok, "", 0, 0})
	h.expect(h.ask(request("keys", 1, desc("org", "acme"))), ok, status{ok, "orgs:4/MINUTE", 3, time.Minute})
	h.expect(h.ask(request("keys", 1, desc("org", "bcme"))), ok, status{ok, "", 0, 0})
}

// share_threshold on a key ending in "*" without a value is, as in
// envoyproxy/ratelimit (whose count is keyed by the entry's key and the
// pattern), one count per entry key: every value of user_id that key: user*
// matches shares one count, user and user_name each have another; key:
// org_a* counts org = acme with org = abc, and org_abc apart.
func TestShareThresholdOnAKeyEndingInAStarSharesACountPerEntryKey(t *testing.T) {
	h := serve(t, `
domain: keys
descriptors:
  - key: user*
    share_threshold: true
    rate_limit: {name: users, unit: minute, requests_per_unit: 2}
  - key: org_a*
    share_threshold: true
    rate_limit: {name: orgs, unit: minute, requests_per_unit: 2}
`)
	users := func(left uint32) status { return status{ok, "users:2/MINUTE", left, time.Minute} }
	h.expect(h.ask(request("keys", 1, desc("user_id", "42"))), ok, users(1))
	h.expect(h.ask(request("keys", 1, desc("user_id", "43"))), ok, users(0))
	h.expect(h.ask(request("keys", 1, desc("user_id", "44"))), over, status{over, "users:2/MINUTE", 0, time.Minute})
	h.expect(h.ask(request("keys", 1, desc("user", "x"))), ok, users(1))
	h.expect(h.ask(request("keys", 1, desc("user_name", "y"))), ok, users(1))
	h.expect(h.ask(request("keys", 1, desc("user_name", "z"))), ok, users(0))

	orgs := func(left uint32) status { return status{ok, "orgs:2/MINUTE", left, time.Minute} }
	h.expect(h.ask(request("keys", 1, desc("org", "acme"))), ok, orgs(1))
	h.expect(h.ask(request("keys", 1, desc("org", "abc"))), ok, orgs(0))
	h.expect(h.ask(request("keys", 1, desc("org_abc", "z"))), ok, orgs(1))
}
