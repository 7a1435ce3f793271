package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// An expensive endpoint inside a critical subtree (critical "POST /jobs/",
// expensive "POST /jobs/run") is shed from level 1 (the repository's own
// TestAnExceptionInsideAnExpensiveSubtreeIsNotShed). forward-auth.md's
// Degradation section: an expensive endpoint "matches every spelling that
// upstreams serve as it ... a trailing slash, path parameters, the path in
// another case, a format suffix", and "A request that is in a class and
// expensive under another spelling is shed as expensive from level 1":
// POST /jobs/run/ (Express, Rails, ASP.NET Core: /jobs/run), /jobs/RUN
// (Express, ASP.NET Core), /jobs/run;x=1 (Tomcat, Spring) and
// /jobs/run.json (Rails) are shed at level 1, not taken for the critical
// subtree's because the expensive class does not match them as written.
func TestARespelledExpensiveEndpointInsideACriticalSubtreeIsShed(t *testing.T) {
	cfg := strings.Replace(shedConfig, `expensive: ["POST /api/generate"]`, `expensive: ["POST /jobs/run"]`, 1)
	f := newFixture(t, strings.Replace(cfg, `critical: ["POST /api/pay"]`, `critical: ["POST /jobs/"]`, 1))
	f.pin(t, "elevated")
	for _, path := range []string{"/jobs/run", "/jobs/run/", "/jobs/RUN", "/jobs/run;x=1", "/jobs/run.json"} {
		t.Run(path, func(t *testing.T) {
			what := "elevated, POST " + path
			r := f.do(t, "POST", path, "", nil)
			if body := readAll(t, r); r.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s through the proxy: %d %s, want 503 as POST /jobs/run", what, r.StatusCode, body)
			}
			if fa := f.forwardAuth(t, "POST", path, "203.0.113.5"); fa.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("forward-auth, %s: %d, want 503", what, fa.StatusCode)
			}
			if a := f.check(t, `{"subject":"s","method":"POST","path":"`+path+`"}`); a.Allowed {
				t.Errorf("decision API, %s: admitted, want shed", what)
			}
		})
	}
	// Not the endpoint under any spelling: the critical write is served.
	if r := f.do(t, "POST", "/jobs/other", "", nil); r.StatusCode != http.StatusOK {
		t.Errorf("elevated, POST /jobs/other: %d, want 200", r.StatusCode)
	}
}
