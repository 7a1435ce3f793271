package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// spellingsConfig has a key plan and an anonymous plan of 3 a minute each
// (per client), the default key headers (Authorization, X-Api-Key), and a
// rule limiting full exports (X-Export: full) to 1 a minute per client.
const spellingsConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
  anon:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
default_plan: free
anonymous_plan: anon
keys:
  - {name: k1, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free} # demo-free-key
rules:
  - name: exports
    match: {headers: [{name: X-Export, value: full}]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`

// headersSeen is an upstream recording the headers of each request it
// serves.
type headersSeen struct {
	mu   sync.Mutex
	seen []http.Header
}

func (u *headersSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen = append(u.seen, r.Header.Clone())
}

// got returns the values of the header name (as Go canonicalizes it) of
// each request served.
func (u *headersSeen) got(name string) [][]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var vs [][]string
	for _, h := range u.seen {
		vs = append(vs, h[http.CanonicalHeaderKey(name)])
	}
	return vs
}

// Rack (Puma's allow_underscore_headers is on by default) and WSGI servers
// read X_Api_Key as HTTP_X_API_KEY, the X-Api-Key an app authenticates by,
// while sluice reads X-Api-Key alone. The reverse proxy removes every
// other spelling of a header it reads (another case, "_" for "-"): an API
// key sent as X_Api_Key never reaches the upstream, so a client sending
// it from many addresses is served as anonymous clients, never as the
// key's. The spelling sluice read passes on.
func TestProxyRemovesAnotherSpellingOfTheKeyHeader(t *testing.T) {
	up := &headersSeen{}
	f := newFixtureOn(t, spellingsConfig, up)
	for i := range 3 {
		r := f.do(t, "GET", "/api/search", "", map[string]string{"X_Api_Key": "demo-free-key",
			"X-Forwarded-For": "198.51.100." + string(rune('1'+i))})
		readAll(t, r)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d, want 200 (an anonymous client's first)", i, r.StatusCode)
		}
	}
	for i, vs := range up.got("X_Api_Key") {
		if len(vs) > 0 {
			t.Errorf("request %d: the upstream got X_Api_Key %q, a key sluice did not count", i, vs)
		}
	}
	r := f.do(t, "GET", "/api/search", "", map[string]string{"X-Api-Key": "demo-free-key"})
	readAll(t, r)
	if vs := up.got("X-Api-Key"); r.StatusCode != http.StatusOK || len(vs) != 4 || len(vs[3]) != 1 {
		t.Errorf("X-Api-Key: %d, the upstream got %q, want 200 and the key passed on", r.StatusCode, vs)
	}
}

// X_Export: full is X-Export: full to a Rack or WSGI upstream, which a
// rule matching X-Export limits: the reverse proxy removes that spelling
// from every peer's request (the test's peer is a trusted one), so the
// upstream serves the export only as judged, the rule's X-Export passing
// on.
func TestProxyRemovesAnotherSpellingOfARulesHeader(t *testing.T) {
	up := &headersSeen{}
	f := newFixtureOn(t, spellingsConfig, up)
	for range 2 {
		r := f.do(t, "GET", "/api/export", "", map[string]string{"X_Export": "full", "X-Forwarded-For": "198.51.100.7"})
		readAll(t, r)
	}
	r := f.do(t, "GET", "/api/export", "", map[string]string{"X-Export": "full", "X-Forwarded-For": "198.51.100.8"})
	readAll(t, r)
	for i, vs := range up.got("X_Export") {
		if len(vs) > 0 {
			t.Errorf("request %d: the upstream got X_Export %q, which the rule did not see", i, vs)
		}
	}
	if vs := up.got("X-Export"); len(vs) != 3 || strings.Join(vs[2], ",") != "full" {
		t.Errorf("the upstream got X-Export %q, want the third request's full", vs)
	}
}

// Forward-auth cannot remove a header from the request the front proxy
// passes on to the API, so it refuses with a 400, nothing spent, a
// description carrying another spelling of a header sluice reads (an API
// key header, a rule's header); nginx drops such headers by default
// (underscores_in_headers off).
func TestForwardAuthRefusesAnotherSpellingOfAHeaderItReads(t *testing.T) {
	f := newFixture(t, spellingsConfig)
	for _, name := range []string{"X_Api_Key", "X_Export"} {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/export",
			"X-Forwarded-For": "198.51.100.9", name: "demo-free-key"})
		if body := readAll(t, r); r.StatusCode != http.StatusBadRequest || !strings.Contains(body, http.CanonicalHeaderKey(name)) {
			t.Errorf("%s: %d %s, want a 400 naming it", name, r.StatusCode, body)
		}
	}
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/export",
		"X-Forwarded-For": "198.51.100.9", "X_Request_Id": "r-1"})
	readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != http.StatusOK || !strings.HasPrefix(rl, `"per-minute";r=2`) {
		t.Errorf("a header sluice does not read, with underscores: %d RateLimit %q, want 200 and r=2 (nothing spent before)", r.StatusCode, rl)
	}
}
