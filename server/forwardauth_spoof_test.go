package server_test

import (
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// Each front proxy sets one set of description headers (nginx the
// X-Original-* its configuration names, Caddy and Traefik X-Forwarded-*)
// and passes the client's other headers on. A client that writes the other
// set itself (an exempt URI, a cheaper method) does not choose what is
// decided: descriptions that differ are refused, nothing is spent and
// nothing reaches the API.
func TestForwardAuthConflictingDescriptionsAreRefused(t *testing.T) {
	f := newFixture(t, testConfig)
	ask := func(h map[string]string) int {
		t.Helper()
		h["X-Forwarded-For"] = "198.51.100.40"
		return f.do(t, "GET", "/v1/forward-auth", "", h).StatusCode
	}
	cases := []struct {
		name string
		h    map[string]string
		want int
	}{
		{"nginx's URI with a client's X-Forwarded-Uri", map[string]string{"X-Original-URI": "/api/search", "X-Original-Method": "GET", "X-Forwarded-Uri": "/api/health"}, 400},
		{"nginx's method with a client's X-Forwarded-Method", map[string]string{"X-Original-URI": "/api/generate", "X-Original-Method": "POST", "X-Forwarded-Method": "GET"}, 400},
		{"Caddy's URI with a client's X-Original-URI", map[string]string{"X-Forwarded-Uri": "/api/search", "X-Forwarded-Method": "GET", "X-Original-URI": "/api/health"}, 400},
		{"a client's second X-Forwarded-Uri", map[string]string{"X-Forwarded-Uri": "/api/search"}, 0},
		{"the same description twice", map[string]string{"X-Original-URI": "/api/search", "X-Forwarded-Uri": "/api/search", "X-Original-Method": "GET", "X-Forwarded-Method": "GET"}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == 0 { // two lines of one header
				req := f.admin.URL + "/v1/forward-auth"
				r := f.sendLines(t, req, "X-Forwarded-Uri", "/api/health", "/api/search")
				if r != 400 {
					t.Errorf("status %d, want 400", r)
				}
				return
			}
			if got := ask(c.h); got != c.want {
				t.Errorf("status %d, want %d", got, c.want)
			}
		})
	}
	// Only the agreeing description spent anything: 2 of the 3 remain.
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": "/api/search", "X-Forwarded-For": "198.51.100.40"})
	if got := r.Header.Get("RateLimit"); got != `"per-minute";r=1;t=60` {
		t.Errorf("after the refused descriptions: RateLimit %q, want r=1 (only the agreeing one and this one spent)", got)
	}
}

// Through nginx running examples/nginx/sluice.conf, a client's own
// X-Forwarded-Uri and X-Forwarded-Method (nginx passes a client's headers
// to the auth subrequest) neither exempt its request nor make it cheaper.
func TestNginxClientCannotDescribeItsOwnRequest(t *testing.T) {
	f := newFixture(t, frontConfig(t, "403"))
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	forgedGetsNothing(t, f, base, map[string]string{"X-Forwarded-Uri": "/api/health", "X-Forwarded-Method": "GET"})
	// The client's quota is whole: POST /api/generate costs 2 of its 3.
	if r := frontCall(t, "POST", base+"/api/generate", nil); r.status != 200 || r.header.Get("RateLimit") != `"per-minute";r=1;t=60` {
		t.Errorf("an honest POST /api/generate: %d RateLimit %q, want 200 r=1", r.status, r.header.Get("RateLimit"))
	}
}

// The same through Caddy running examples/caddy/Caddyfile, with nginx's
// header names forged.
func TestCaddyClientCannotDescribeItsOwnRequest(t *testing.T) {
	f := newFixture(t, frontConfig(t, "429"))
	base := startCaddy(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	forgedGetsNothing(t, f, base, map[string]string{"X-Original-URI": "/api/health", "X-Original-Method": "GET"})
}

// forgedGetsNothing sends 4 POST /api/generate (cost 2 of the minute's 3)
// through the front proxy at base with the forged description headers:
// refused or decided as what they are, at most one reaches the API, and
// never as exempt.
func forgedGetsNothing(t *testing.T, f *fixture, base string, forged map[string]string) {
	t.Helper()
	for i := range 4 {
		r := frontCall(t, "POST", base+"/api/generate", forged)
		if r.status == 200 && r.header.Get("RateLimit") != `"per-minute";r=1;t=60` {
			t.Errorf("request %d with a forged description: admitted with RateLimit %q, want r=1 (cost 2) or a refusal", i+1, r.header.Get("RateLimit"))
		}
	}
	if n := f.hits.Load(); n > 1 {
		t.Errorf("upstream saw %d requests, want at most the 1 that 3 units pay for", n)
	}
}

// sendLines sends a GET to url with the fixture caller's token and one
// header of several lines, and returns the status.
func (f *fixture) sendLines(t *testing.T, url, name string, values ...string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set(server.TokenHeader, testToken)
	req.Header.Set("X-Forwarded-For", "198.51.100.40")
	for _, v := range values {
		req.Header.Add(name, v)
	}
	r, err := f.admin.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	return r.StatusCode
}
