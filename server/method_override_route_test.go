package server_test

import (
	"net/http"
	"testing"
)

// A rule for DELETE alone, keyed by its route (or a path wildcard), never
// applies to a POST: a POST whose query's _method names DELETE (as
// Laravel serves it) is judged as the DELETE
// and counted by the rule, not refused as a request neither method judges
// alone.
func TestAPostNamingARouteKeyedRulesMethodIsJudgedAsIt(t *testing.T) {
	for _, key := range []string{"route", "path:id"} {
		cfg := overrideConfig + `rules:
  - name: deletes
    match: {methods: [DELETE], paths: ["/api/items/{id}"]}
    key: [` + key + `]
    cost: 1
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`
		up := &overrideSeen{}
		f := newFixtureOn(t, cfg, up)
		r := f.do(t, "POST", "/api/items/1?_method=delete", "a=b", formHeader)
		body := readAll(t, r)
		if r.StatusCode != http.StatusOK {
			t.Errorf("key %s: POST /api/items/1 with _method=delete: %d %s, want 200, judged as the DELETE", key, r.StatusCode, body)
			continue
		}
		// The rule counted it: a DELETE now finds its one request spent.
		r = f.do(t, "DELETE", "/api/items/1", "", map[string]string{"X-Forwarded-For": "198.51.100.40"})
		readAll(t, r)
		if r.StatusCode != http.StatusTooManyRequests {
			t.Errorf("key %s: the DELETE after it: %d, want 429 (the rule's one request spent)", key, r.StatusCode)
		}
	}
}

// The same through forward-auth: the described POST
// /api/items/1?_method=delete is judged as the DELETE.
func TestForwardAuthJudgesAPostNamingARouteKeyedRulesMethodAsIt(t *testing.T) {
	cfg := overrideConfig + `rules:
  - name: deletes
    match: {methods: [DELETE], paths: ["/api/items/{id}"]}
    key: [route]
    cost: 1
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`
	f := newFixture(t, cfg)
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Original-Method": "POST",
		"X-Original-URI": "/api/items/1?_method=delete", "X-Forwarded-For": "198.51.100.30"})
	if body := readAll(t, r); r.StatusCode != http.StatusOK {
		t.Errorf("forward-auth, POST /api/items/1?_method=delete: %d %s, want 200, judged as the DELETE", r.StatusCode, body)
	}
}
