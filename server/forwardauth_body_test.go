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
