package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// overrideConfig charges a deletion 3 units of a plan of 3 a minute, and
// every other request 1.
const overrideConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
    costs: {"DELETE /api/items/{id}": 3}
`

// Symfony and Laravel serve a POST carrying X-HTTP-Method-Override as the
// method it names, whatever their configuration, and ASP.NET Core's
// UseHttpMethodOverride, Rack::MethodOverride and Express's
// method-override read it (or X-HTTP-Method, X-Method-Override) when
// enabled: a client that sends POST /api/items/1 with
// X-HTTP-Method-Override: DELETE would delete the item charged as a POST.
// The reverse proxy judges the method of the request line, so the
// upstream gets no method override, in any spelling a server reads as one
// (any case, "_" for "-"), from any peer, trusted ones included: it is the
// client's word however many proxies passed it on. The request is charged
// as the POST the upstream then serves.
func TestProxyRemovesAMethodOverride(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	})
	sent := map[string]string{"X-HTTP-Method-Override": "DELETE", "X-Http-Method": "DELETE", "x-method-override": "DELETE",
		"X_HTTP_Method_Override": "DELETE", "X-Request-Id": "r-1"}
	for _, trusted := range []string{"10.0.0.0/8", "127.0.0.1/32"} { // the test's client is 127.0.0.1
		t.Run("trusted "+trusted, func(t *testing.T) {
			f := newFixtureOn(t, strings.Replace(overrideConfig, "127.0.0.1/32", trusted, 1), up)
			r := f.do(t, "POST", "/api/items/1", "", sent)
			readAll(t, r)
			if rl := r.Header.Get("RateLimit"); r.StatusCode != 200 || !strings.HasPrefix(rl, `"per-minute";r=2`) {
				t.Errorf("%d RateLimit %q, want 200 and r=2 (a POST costs 1)", r.StatusCode, rl)
			}
			mu.Lock()
			defer mu.Unlock()
			for name := range seen {
				if name != "X-Request-Id" && strings.Contains(strings.ToLower(strings.ReplaceAll(name, "_", "-")), "method") {
					t.Errorf("the upstream got %s: %q", name, seen[name])
				}
			}
			if seen.Get("X-Request-Id") != "r-1" {
				t.Errorf("X-Request-Id %q, want r-1: a header that overrides nothing passes", seen.Get("X-Request-Id"))
			}
		})
	}
}

// Forward-auth cannot remove a header from the request the front proxy
// passes on (nginx's auth_request passes every header of the client's),
// so a described POST with a method override is judged as the method it
// names, when the configuration judges that method at least as strictly
// as POST: POST /api/items/1 with X-HTTP-Method-Override: delete pays what
// DELETE /api/items/{id} costs, 3.
func TestForwardAuthChargesTheOverridingMethod(t *testing.T) {
	f := newFixture(t, overrideConfig)
	for i, name := range []string{"X-HTTP-Method-Override", "X-HTTP-Method", "X_Method_Override"} {
		r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Original-Method": "POST", "X-Original-URI": "/api/items/1",
			"X-Forwarded-For": "198.51.100." + string(rune('1'+i)), name: "delete"})
		readAll(t, r)
		if rl := r.Header.Get("RateLimit"); r.StatusCode != 200 || !strings.HasPrefix(rl, `"per-minute";r=0`) {
			t.Errorf("POST /api/items/1 with %s: delete: %d RateLimit %q, want 200 and r=0 (a DELETE costs 3)", name, r.StatusCode, rl)
		}
	}
	// Only a POST is overridden: a GET with the header is a GET.
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Original-Method": "GET", "X-Original-URI": "/api/items/1",
		"X-Forwarded-For": "198.51.100.9", "X-HTTP-Method-Override": "DELETE"})
	readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != 200 || !strings.HasPrefix(rl, `"per-minute";r=2`) {
		t.Errorf("GET with an override: %d RateLimit %q, want r=2", r.StatusCode, rl)
	}
}

// When the configuration judges some request more strictly as a POST than
// as the method an override names (a cost of a POST; a rule for POST
// alone; an exempt route of the method named), neither method alone is at
// least as strict, and the middleware judges one: forward-auth refuses the
// description with a 400 (nothing spent, nothing reaches the API) rather
// than under-charge it. So are overrides that name two methods, or none.
func TestForwardAuthRefusesAnOverrideItCannotJudge(t *testing.T) {
	configs := map[string]string{
		"a POST cost": strings.Replace(overrideConfig, `"DELETE /api/items/{id}": 3`, `"DELETE /api/items/{id}": 3, "POST /api/": 2`, 1),
		"a rule for POST alone": overrideConfig + `rules:
  - name: writes
    match: {methods: [POST], paths: ["/api/"]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`,
		"a free deletion":    strings.Replace(overrideConfig, `"DELETE /api/items/{id}": 3`, `"DELETE /api/items/{id}": 0`, 1),
		"an exempt deletion": overrideConfig + `exempt: ["DELETE /api/items/{id}"]` + "\n",
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, cfg)
			r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/items/1",
				"X-Forwarded-For": "198.51.100.20", "X-HTTP-Method-Override": "DELETE"})
			if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, "method override") {
				t.Errorf("%d %s, want a 400 naming the method override", r.StatusCode, body)
			}
		})
	}
	f := newFixture(t, overrideConfig)
	for _, h := range []map[string]string{
		{"X-HTTP-Method-Override": "DELETE", "X-HTTP-Method": "PUT"},
		{"X-HTTP-Method-Override": "DEL ETE"},
	} {
		h["X-Forwarded-Method"], h["X-Forwarded-Uri"], h["X-Forwarded-For"] = "POST", "/api/items/1", "198.51.100.21"
		r := f.do(t, "GET", "/v1/forward-auth", "", h)
		if body := readAll(t, r); r.StatusCode != 400 {
			t.Errorf("%v: %d %s, want 400", h, r.StatusCode, body)
		}
	}
}

// A described POST whose override names a method the configuration judges
// less strictly than a POST (a GET, where a POST costs 2 and nothing names
// GET) is judged as the POST it is, as the reverse proxy judges a _method:
// the client pays at least what the API serves, and nothing is refused
// that one method alone judges.
func TestForwardAuthJudgesAnOverrideToALaxerMethodAsThePost(t *testing.T) {
	f := newFixture(t, strings.Replace(overrideConfig, `"DELETE /api/items/{id}": 3`, `"POST /api/": 2`, 1))
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Original-Method": "POST", "X-Original-URI": "/api/items/1",
		"X-Forwarded-For": "198.51.100.30", "X-HTTP-Method-Override": "GET"})
	body := readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != 200 || !strings.HasPrefix(rl, `"per-minute";r=1`) {
		t.Errorf("POST /api/items/1 with X-HTTP-Method-Override: GET: %d RateLimit %q %s, want 200 and r=1 (the POST's 2 of 3)", r.StatusCode, rl, body)
	}
}
