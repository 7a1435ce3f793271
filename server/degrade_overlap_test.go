package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// A class's pattern may lie inside another's: a health check or a critical
// write under an expensive subtree, or an expensive endpoint under a
// critical subtree. As in a ServeMux, the more specific pattern decides:
// GET /api/health stays a health check that no level sheds, POST /api/pay
// a critical write served up to level 2, while POST /jobs/run, expensive
// inside the critical POST /jobs/, is shed from level 1.
func TestAnExceptionInsideAnExpensiveSubtreeIsNotShed(t *testing.T) {
	cfg := strings.Replace(shedConfig, `expensive: ["POST /api/generate"]`, `expensive: ["/api/", "POST /jobs/run"]`, 1)
	cfg = strings.Replace(cfg, `critical: ["POST /api/pay"]`, `critical: ["POST /api/pay", "POST /jobs/"]`, 1)
	f := newFixture(t, strings.Replace(cfg, `health: ["GET /health"]`, `health: ["GET /api/health"]`, 1))
	for _, c := range []struct {
		level, method, path string
		shed                bool
	}{
		{"elevated", "GET", "/api/health", false},
		{"high", "GET", "/api/health", false},
		{"critical", "GET", "/api/health", false},
		{"elevated", "POST", "/api/pay", false},
		{"high", "POST", "/api/pay", false},
		{"critical", "POST", "/api/pay", true},
		{"elevated", "GET", "/api/search", true},
		{"elevated", "POST", "/jobs/run", true},
		{"high", "POST", "/jobs/run", true},
		{"elevated", "POST", "/jobs/other", false},
		{"high", "POST", "/jobs/other", false},
		{"elevated", "GET", "/API/health", true},
	} {
		f.pin(t, c.level)
		what := c.level + ", " + c.method + " " + c.path
		r := f.do(t, c.method, c.path, "", nil)
		body := readAll(t, r)
		if want := map[bool]int{true: 503, false: 200}[c.shed]; r.StatusCode != want {
			t.Errorf("%s through the proxy: %d %s, want %d", what, r.StatusCode, body, want)
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
