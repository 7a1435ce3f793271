package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// The critical and health classes are exceptions to shedding: they match
// a request only as written (a respelled one is shed, the safe direction),
// and only when the path without its parameters is theirs too. Tomcat,
// Jetty and Spring route /api/pay/..;/orders as /api/orders: under
// "POST /api/pay/" as written, it was a write that level 2 let through,
// and /health/..;/api/search a read that level 3 let through.
func TestShedExceptionsMatchOnlyAsWritten(t *testing.T) {
	cfg := strings.Replace(shedConfig, `critical: ["POST /api/pay"]`, `critical: ["POST /api/pay/"]`, 1)
	f := newFixture(t, strings.Replace(cfg, `health: ["GET /health"]`, `health: ["GET /health/"]`, 1))
	for _, c := range []struct {
		level, method, path string
		shed                bool
	}{
		{"high", "POST", "/api/pay/card", false},
		{"high", "POST", "/api/pay/card;v=1", false},
		{"high", "POST", "/api/pay/..;/orders", true},
		{"high", "POST", "/api/pay;x/../orders", true},
		{"high", "POST", "/API/pay/card", true},
		{"high", "post", "/api/pay/card", true},
		{"critical", "GET", "/health/live", false},
		{"critical", "GET", "/health/..;/api/search", true},
		{"critical", "GET", "/health/x/..;/..;/api/search", true},
		{"critical", "GET", "/Health/live", true},
	} {
		f.pin(t, c.level)
		what := c.level + ", " + c.method + " " + c.path
		r := f.do(t, c.method, c.path, "", nil)
		body := readAll(t, r)
		if want := map[bool]int{true: 503, false: 200}[c.shed]; r.StatusCode != want {
			t.Errorf("%s through the proxy: %d %s, want %d", what, r.StatusCode, body, want)
		}
		if c.method != strings.ToUpper(c.method) {
			continue // forward-auth and the decision API describe no such method
		}
		fa := f.forwardAuth(t, c.method, c.path, "203.0.113.5")
		if c.shed {
			wantShed(t, fa, http.StatusServiceUnavailable, "forward-auth, "+what)
		} else if body := readAll(t, fa); fa.StatusCode != http.StatusOK {
			t.Errorf("forward-auth, %s: %d %s, want 200", what, fa.StatusCode, body)
		}
		a := f.check(t, `{"subject":"s","method":"`+c.method+`","path":"`+c.path+`"}`)
		if c.shed {
			wantShedAnswer(t, a, c.level, "decision API, "+what)
		} else if !a.Allowed {
			t.Errorf("decision API, %s: %+v, want it admitted", what, a)
		}
	}
}
