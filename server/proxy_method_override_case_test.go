package server_test

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// Symfony's Request::getMethod, which Laravel serves every request by,
// upper-cases REQUEST_METHOD before it looks for an override, so a request
// sent as "post /api/items/x?_method=DELETE" is served as the DELETE: the
// proxy judges it as the DELETE (its cost of 5), as it judges the POST,
// or refuses it with a 400 (docs/rules.md, "Method overrides"), never as a
// plain POST of 1 unit. (Forward-auth and /v1/check refuse a lower-case
// method with a 400.)
func TestTheProxyJudgesALowerCasePostsMethodOverride(t *testing.T) {
	var method, query atomic.Value
	f := newFixtureOn(t, checkOverrideConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method.Store(r.Method)
		query.Store(r.URL.RawQuery)
	}))
	r := f.do(t, "post", "/api/items/x?_method=DELETE", "", map[string]string{"X-Forwarded-For": "198.51.100.7"})
	readAll(t, r)
	if r.StatusCode == http.StatusBadRequest {
		return // refused, nothing spent: as the docs allow
	}
	m := rateLimitRemaining.FindStringSubmatch(r.Header.Get("RateLimit"))
	if m == nil {
		t.Fatalf("%d, RateLimit %q: no per-minute remaining", r.StatusCode, r.Header.Get("RateLimit"))
	}
	if m[1] != "95" {
		sent, _ := method.Load().(string)
		q, _ := query.Load().(string)
		t.Errorf("post /api/items/x?_method=DELETE through the proxy: remaining %s, want 95 (the DELETE's cost of 5) or a 400; the upstream got method %q, query %q, which Laravel serves as a DELETE",
			m[1], sent, q)
	}
}
