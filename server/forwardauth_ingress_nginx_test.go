package server_test

import (
	"io"
	"maps"
	"strings"
	"testing"
)

// ingressNginxAuth is what ingress-nginx's auth-url subrequest (the
// forward-auth caller deploy/kubernetes/networkpolicy.yaml admits) sets,
// per its nginx.tmpl, for a client's request without the auth-method
// annotation: X-Original-URL ($scheme://$http_host$request_uri),
// X-Original-Method, X-Sent-From, X-Real-IP, X-Forwarded-For and
// X-Auth-Request-Redirect ($request_uri). It passes every header of the
// client's on besides (proxy_pass_request_headers on): clients holds them.
func ingressNginxAuth(method, host, requestURI, client string, clients map[string]string) map[string]string {
	h := maps.Clone(clients)
	if h == nil {
		h = map[string]string{}
	}
	h["X-Original-URL"] = "http://" + host + requestURI
	h["X-Original-Method"] = method
	h["X-Sent-From"] = "nginx-ingress-controller"
	h["X-Real-IP"] = client
	h["X-Forwarded-For"] = client
	h["X-Auth-Request-Redirect"] = requestURI
	return h
}

// askIngressNginx sends forward-auth h and returns the answer's status,
// RateLimit header and body.
func askIngressNginx(t *testing.T, f *fixture, h map[string]string) (int, string, string) {
	t.Helper()
	r := f.do(t, "GET", "/v1/forward-auth", "", h)
	body, _ := io.ReadAll(r.Body)
	return r.StatusCode, r.Header.Get("RateLimit"), string(body)
}

// Forward-auth judges the request ingress-nginx describes by the path and
// query of X-Original-URL, its only URI header: a POST /api/generate (cost
// 2 of the free plan's 3 a minute) costs 2, not what "/" costs.
func TestForwardAuthJudgesIngressNginxRequestByItsURL(t *testing.T) {
	f := newFixture(t, testConfig)
	status, rl, body := askIngressNginx(t, f, ingressNginxAuth("POST", "api.example.com", "/api/generate", "198.51.100.61", nil))
	if status != 200 || rl != `"per-minute";r=1;t=60` {
		t.Errorf("POST /api/generate through ingress-nginx's auth-url: %d RateLimit %q %s, want 200 r=1 (cost 2 of 3)", status, rl, body)
	}
}

// Through ingress-nginx a client's own X-Forwarded-Uri reaches sluice
// beside the X-Original-URL ingress-nginx sets: when they differ neither is
// believed (a 400, nothing spent), so a client's GET /api/search cannot
// pass as the exempt GET /api/health.
func TestForwardAuthIngressNginxClientCannotNameAnExemptPath(t *testing.T) {
	f := newFixture(t, testConfig)
	for i := range 5 {
		h := ingressNginxAuth("GET", "api.example.com", "/api/search", "198.51.100.62", map[string]string{"X-Forwarded-Uri": "/api/health"})
		if status, rl, body := askIngressNginx(t, f, h); status != 400 || !strings.Contains(body, "describe different requests") {
			t.Errorf("request %d, GET /api/search with the client's own X-Forwarded-Uri: /api/health: %d RateLimit %q %s, want a 400 problem", i+1, status, rl, body)
		}
	}
	if status, rl, _ := askIngressNginx(t, f, ingressNginxAuth("GET", "api.example.com", "/api/search", "198.51.100.62", nil)); status != 200 || rl != `"per-minute";r=2;t=60` {
		t.Errorf("GET /api/search after the refused ones: %d RateLimit %q, want 200 r=2 (the 400s spent nothing)", status, rl)
	}
}

// With the auth-method annotation ingress-nginx also sets X-Original-URI,
// the same request URI as X-Original-URL's: the two agree and the request
// is decided; a client's own that differs is refused as any other
// description that differs.
func TestForwardAuthOriginalURLAndURIMustAgree(t *testing.T) {
	f := newFixture(t, testConfig)
	same := ingressNginxAuth("POST", "api.example.com", "/api/generate?x=1", "198.51.100.63", map[string]string{"X-Original-URI": "/api/generate?x=1"})
	if status, rl, body := askIngressNginx(t, f, same); status != 200 || rl != `"per-minute";r=1;t=60` {
		t.Errorf("X-Original-URI equal to X-Original-URL's request URI: %d RateLimit %q %s, want 200 r=1", status, rl, body)
	}
	other := ingressNginxAuth("GET", "api.example.com", "/api/search", "198.51.100.64", map[string]string{"X-Original-URI": "/api/health"})
	if status, _, body := askIngressNginx(t, f, other); status != 400 {
		t.Errorf("X-Original-URI /api/health beside X-Original-URL's /api/search: %d %s, want 400", status, body)
	}
}

// X-Original-URL's host is the described host, as X-Forwarded-Host's: a
// rule for api.example.com counts ingress-nginx's requests to it. A
// client's own X-Forwarded-Host that names another host, or any host
// beside an X-Original-URL that names none (a request without Host), is
// refused with a 400 and spends nothing: the client does not pick its
// host.
func TestForwardAuthIngressNginxHostIsTheURLs(t *testing.T) {
	f := newFixture(t, hostConfig("api.example.com"))
	ask := func(host string, clients map[string]string) (int, string) {
		t.Helper()
		status, _, body := askIngressNginx(t, f, ingressNginxAuth("GET", host, "/api/search", "198.51.100.65", clients))
		return status, body
	}
	if status, body := ask("api.example.com", nil); status != 200 {
		t.Fatalf("first request to api.example.com: %d %s", status, body)
	}
	if status, body := ask("api.example.com", map[string]string{"X-Forwarded-Host": "www.example.com"}); status != 400 || !strings.Contains(body, "different hosts") {
		t.Errorf("a client's own X-Forwarded-Host: www.example.com: %d %s, want a 400 problem", status, body)
	}
	if status, body := ask("", map[string]string{"X-Forwarded-Host": "www.example.com"}); status != 400 {
		t.Errorf("a client's own X-Forwarded-Host beside a request without Host: %d %s, want 400", status, body)
	}
	if status, body := ask("api.example.com", map[string]string{"X-Forwarded-Host": "api.example.com"}); status != 429 {
		t.Errorf("second request to api.example.com (X-Forwarded-Host agreeing): %d %s, want 429 by the host's rule", status, body)
	}
	if status, body := ask("", nil); status != 200 {
		t.Errorf("a request without Host, which no host rule matches: %d %s, want 200", status, body)
	}
}

// A forward-auth request that describes no URI (no X-Forwarded-Uri,
// X-Original-URI or X-Original-URL) comes from a front proxy not set up to
// describe requests: it is refused with a 400 problem naming the headers,
// and spends nothing, instead of being judged as "/".
func TestForwardAuthWithoutAURIIsRefused(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, h := range []map[string]string{
		{"X-Forwarded-Method": "POST", "X-Forwarded-For": "198.51.100.66"},
		{"X-Original-Method": "GET", "X-Forwarded-Host": "api.example.com", "X-Forwarded-For": "198.51.100.66"},
		{"X-Forwarded-For": "198.51.100.66"},
	} {
		if status, rl, body := askIngressNginx(t, f, h); status != 400 || !strings.Contains(body, "X-Original-URL") {
			t.Errorf("%v: %d RateLimit %q %s, want a 400 problem naming the URI headers", h, status, rl, body)
		}
	}
	if status, rl, _ := askIngressNginx(t, f, map[string]string{"X-Forwarded-Uri": "/api/search", "X-Forwarded-For": "198.51.100.66"}); status != 200 || rl != `"per-minute";r=2;t=60` {
		t.Errorf("GET /api/search after the refused ones: %d RateLimit %q, want 200 r=2 (the 400s spent nothing)", status, rl)
	}
}

// X-Original-URL is read only in the form ingress-nginx sends it:
// "http://" or "https://", a host (none for a request without Host) and a
// request URI that describedTarget accepts, its fragment dropped. Anything
// else is a 400 problem naming the header, nothing spent: no other form
// names a path to judge.
func TestForwardAuthOriginalURLIsReadStrictly(t *testing.T) {
	f := newFixture(t, testConfig)
	ask := func(url string) (int, string, string) {
		t.Helper()
		return askIngressNginx(t, f, map[string]string{"X-Original-URL": url, "X-Original-Method": "GET", "X-Forwarded-For": "198.51.100.67"})
	}
	for _, url := range []string{
		"http://api.example.com/api/health",
		"https://api.example.com:8443/api/health",
		"http:///api/health",
		"http://api.example.com/api/health#x",
		"http://[2001:db8::1]:80/api/health",
	} {
		if status, rl, body := ask(url); status != 200 || rl != "" {
			t.Errorf("%s: %d RateLimit %q %s, want 200 without RateLimit (the exempt GET /api/health)", url, status, rl, body)
		}
	}
	for _, url := range []string{
		"/api/health",
		"api.example.com/api/health",
		"ftp://api.example.com/api/health",
		"HTTP://api.example.com/api/health",
		"http//api.example.com/api/health",
		"http://api.example.com",
		"http://api.example.com?/api/health",
		"http://api.example.com#/api/health",
		"http://user@api.example.com/api/health",
		"http://api.example.com\\/api/health",
		"http://api example.com/api/health",
		"http://api.example.com/api/%zz",
		"http://" + strings.Repeat("a", 256) + "/api/health",
	} {
		if status, rl, body := ask(url); status != 400 || !strings.Contains(body, "X-Original-URL") {
			t.Errorf("%q: %d RateLimit %q %s, want a 400 problem naming X-Original-URL", url, status, rl, body)
		}
	}
	if status, rl, _ := ask("http://api.example.com/api/search"); status != 200 || rl != `"per-minute";r=2;t=60` {
		t.Errorf("GET /api/search after the refused ones: %d RateLimit %q, want 200 r=2 (the 400s spent nothing)", status, rl)
	}
}
