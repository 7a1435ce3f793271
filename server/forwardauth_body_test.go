package server_test

import (
	"net/http"
	"testing"
)

const bodyRuleConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
rules:
  - name: logins
    match: {methods: [POST], paths: ["/v1/login"]}
    key: [form:username]
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}
`

// Forward-auth is told about a request, never given its body: a rule keyed
// by a field of the body counts every request it describes by the rule's
// fallback (the client's address), whatever body the front proxy sends
// along, as docs/rules.md promises.
func TestForwardAuthReadsNoBody(t *testing.T) {
	f := newFixture(t, bodyRuleConfig)
	for i, user := range []string{"alice", "bob", "carol"} {
		r := f.do(t, "POST", "/v1/forward-auth", "username="+user, map[string]string{
			"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/v1/login",
			"Content-Type": "application/x-www-form-urlencoded"})
		want := http.StatusOK
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if r.StatusCode != want {
			t.Errorf("attempt %d (%s): %d, want %d: the rule counts by the address", i+1, user, r.StatusCode, want)
		}
	}
}

// Nor does a query parameter of the field's name choose the count there:
// the upstream may read the body's field (Go and Rails read it first),
// which forward-auth never sees, so a decoy in the query that changes
// with every attempt would escape the rule. Attempts with decoys all fall
// back to the address.
func TestForwardAuthFormKeyFallsBackWhateverTheQuery(t *testing.T) {
	f := newFixture(t, bodyRuleConfig)
	for i, decoy := range []string{"d1", "d2", "d3"} {
		r := f.do(t, "POST", "/v1/forward-auth", "", map[string]string{
			"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/v1/login?username=" + decoy})
		want := http.StatusOK
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if r.StatusCode != want {
			t.Errorf("attempt %d (query %s): %d, want %d: the rule counts by the address", i+1, decoy, r.StatusCode, want)
		}
	}
}
