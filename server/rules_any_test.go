package server_test

import "testing"

// Forward-auth decides by a rule's alternatives as the middleware does:
// 2 a minute across a.example/orders and b.example/billing, and
// a.example/billing not the rule's.
func TestForwardAuthRuleAlternativesShareOneCount(t *testing.T) {
	f := newFixture(t, testConfig+`
rules:
  - name: api
    match:
      - {hosts: [a.example], paths: [/orders]}
      - {hosts: [b.example], paths: [/billing]}
    cost: 1
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}
`)
	ask := func(host, uri string) int {
		t.Helper()
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-For": "198.51.100.1",
			"X-Forwarded-Host": host, "X-Original-Method": "GET", "X-Original-URI": uri})
		readAll(t, r)
		return r.StatusCode
	}
	for i, c := range []struct {
		host, uri string
		want      int
	}{{"a.example", "/orders", 200}, {"b.example", "/billing", 200}, {"a.example", "/orders", 429}, {"a.example", "/billing", 200}} {
		if got := ask(c.host, c.uri); got != c.want {
			t.Errorf("request %d, %s%s: %d, want %d", i+1, c.host, c.uri, got, c.want)
		}
	}
}
