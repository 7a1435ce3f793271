package server_test

import (
	"net/http"
	"testing"
)

// A 401 challenges the caller as RFC 6750 §3 says: a request without a
// token is told the scheme and realm only; one whose token matches no
// caller is told, with error="invalid_token", that the token it sent is
// the fault.
func TestUnauthorizedChallengeSaysWhetherTheTokenWasInvalid(t *testing.T) {
	f := newFixture(t, testConfig+"admin:\n  loopback_scopes: []\n")
	for _, c := range []struct {
		name, token, want string
	}{
		{"no token", "", `Bearer realm="sluice"`},
		{"a token of no caller", "not-a-token", `Bearer realm="sluice", error="invalid_token"`},
	} {
		r := f.send(t, f.admin, "GET", "/metrics", "", map[string]string{"Sluice-Token": c.token})
		readAll(t, r)
		if r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != c.want {
			t.Errorf("%s: %d, WWW-Authenticate %q; want 401 and %q", c.name, r.StatusCode, r.Header.Get("WWW-Authenticate"), c.want)
		}
	}
}
