package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// PHP behind FastCGI (php-fpm behind Caddy's php_fastcgi, which keeps a
// header name's dots) registers HTTP_X.API.KEY as
// $_SERVER['HTTP_X_API_KEY'], the X-Api-Key an app authenticates by. The
// reverse proxy removes X.Api.Key and X.Export from the request the
// upstream gets, as it removes X_Api_Key, and forward-auth, which cannot
// remove them, refuses a description carrying them with a 400 naming the
// header.
func TestHeadersSluiceReadsSpelledWithDotsAreNotPassedOn(t *testing.T) {
	up := &headersSeen{}
	f := newFixtureOn(t, spellingsConfig, up)
	r := f.do(t, "GET", "/api/export", "", map[string]string{"X.Api.Key": "demo-free-key", "X.Export": "full",
		"X-Forwarded-For": "198.51.100.30"})
	if body := readAll(t, r); r.StatusCode != http.StatusOK {
		t.Fatalf("proxied: %d %s, want 200", r.StatusCode, body)
	}
	for _, name := range []string{"X.Api.Key", "X.Export"} {
		if vs := up.got(name); len(vs) != 1 || len(vs[0]) > 0 {
			t.Errorf("the upstream got %s %q, which the limits did not see", name, vs)
		}
	}
	for _, name := range []string{"X.Api.Key", "X.Export"} {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/export",
			"X-Forwarded-For": "198.51.100.31", name: "full"})
		if body := readAll(t, r); r.StatusCode != http.StatusBadRequest || !strings.Contains(body, http.CanonicalHeaderKey(name)) {
			t.Errorf("forward-auth, %s: %d %s, want a 400 naming it", name, r.StatusCode, body)
		}
	}
}
