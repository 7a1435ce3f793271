package server_test

import (
	"net/http"
	"testing"
)

// Every answer of an endpoint that needs a scope depends on who asked — a
// caller known by Sluice-Token, a client certificate or loopback, none of
// which a shared cache keys by, as it does not store what an Authorization
// was sent with: each says Cache-Control: no-store, so that a cache in
// front of the admin listener never serves one caller's answer, or its
// refusal, to another.
func TestAnswersOfScopedEndpointsAreNotStored(t *testing.T) {
	f := newFixture(t, testConfig+`
admin:
  loopback_scopes: []
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, override_plan, admin]}
    - {name: reader, token_sha256: `+sha256Hex("reader-token")+`, scopes: [read]}
`)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/keys", ""},
		{"GET", "/v1/keys/user:u", ""},
		{"GET", "/metrics", ""},
		{"GET", "/dashboard", ""},
		{"GET", "/dashboard/data", ""},
		{"GET", "/designer", ""},
		{"GET", "/v1/degradation", ""},
		{"POST", "/v1/check", `{"user":"u"}`},
	} {
		for _, who := range []struct {
			token string
			code  int
		}{{testToken, http.StatusOK}, {"", http.StatusUnauthorized}, {"not-a-token", http.StatusUnauthorized}} {
			r := f.do(t, c.method, c.path, c.body, map[string]string{"Sluice-Token": who.token})
			readAll(t, r)
			if r.StatusCode != who.code || r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("%s %s with token %q: %d, Cache-Control %q; want %d and no-store", c.method, c.path, who.token, r.StatusCode, r.Header.Get("Cache-Control"), who.code)
			}
		}
	}
	r := f.do(t, "GET", "/v1/keys", "", map[string]string{"Sluice-Token": "reader-token"})
	if readAll(t, r); r.StatusCode != http.StatusForbidden || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET /v1/keys by a reader: %d, Cache-Control %q; want 403 and no-store", r.StatusCode, r.Header.Get("Cache-Control"))
	}
}
