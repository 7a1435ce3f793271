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

// Beside expensive "/api/" and "POST /api/pay/bulk", critical "/api/pay/"
// takes its subtree from "/api/" (it is the more specific) but not the
// bulk job, which is more specific still: POST /api/pay/bulk is shed from
// level 1. So are its respellings, which upstreams serve as that endpoint
// (Django post, Express and Rails /api/pay/bulk/, Express and ASP.NET
// Core /api/pay/BULK, Rails /api/pay/bulk.json, Tomcat /api/pay/bulk;x=1),
// though as written each matches only "/api/", which the exception
// outranks: the exception holds only where it outranks the expensive
// pattern of every spelling. GET /api/pay/status, "/api/" under every
// spelling, is served.
func TestARespelledExpensiveEndpointInsideACriticalSubtreeUnderABroaderExpensiveOneIsShed(t *testing.T) {
	cfg := strings.Replace(shedConfig, `expensive: ["POST /api/generate"]`, `expensive: ["/api/", "POST /api/pay/bulk"]`, 1)
	f := newFixture(t, strings.Replace(cfg, `critical: ["POST /api/pay"]`, `critical: ["/api/pay/"]`, 1))
	f.pin(t, "elevated")
	for _, c := range []struct {
		method, path string
		shed         bool
	}{
		{"POST", "/api/pay/bulk", true},
		{"GET", "/api/pay/status", false},
		{"POST", "/api/pay/status/", false},
		{"post", "/api/pay/bulk", true},
		{"Post", "/api/pay/bulk", true},
		{"POST", "/api/pay/bulk/", true},
		{"POST", "/api/pay/BULK", true},
		{"POST", "/api/pay/bulk.json", true},
		{"POST", "/api/pay/bulk;x=1", true},
	} {
		r := f.do(t, c.method, c.path, "", nil)
		body := readAll(t, r)
		if want := map[bool]int{true: http.StatusServiceUnavailable, false: http.StatusOK}[c.shed]; r.StatusCode != want {
			t.Errorf("elevated, %s %s: %d %s, want %d", c.method, c.path, r.StatusCode, body, want)
		}
		if c.method != "POST" && c.method != "GET" {
			continue // the decision API takes a method as IANA registers it
		}
		if a := f.check(t, `{"subject":"s","method":"`+c.method+`","path":"`+c.path+`"}`); a.Allowed == c.shed {
			t.Errorf("decision API, elevated, %s %s: allowed %v, want %v", c.method, c.path, a.Allowed, !c.shed)
		}
	}
}

// A critical subtree whose root is an expensive endpoint without the
// trailing slash ("/jobs/run/" beside expensive "POST /jobs/run") matches
// no request that the expensive one does: POST /jobs/run/, which Express,
// Rails and ASP.NET Core serve as /jobs/run, is shed from level 1, while
// POST /jobs/run/status, below the subtree's root, is served.
func TestACriticalSubtreeDoesNotTakeItsRootsExpensiveSpelling(t *testing.T) {
	cfg := strings.Replace(shedConfig, `expensive: ["POST /api/generate"]`, `expensive: ["POST /jobs/run"]`, 1)
	f := newFixture(t, strings.Replace(cfg, `critical: ["POST /api/pay"]`, `critical: ["/jobs/run/"]`, 1))
	f.pin(t, "elevated")
	if r := f.do(t, "POST", "/jobs/run/", "", nil); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("elevated, POST /jobs/run/: %d, want 503 as POST /jobs/run", r.StatusCode)
	}
	if r := f.do(t, "POST", "/jobs/run/status", "", nil); r.StatusCode != http.StatusOK {
		t.Errorf("elevated, POST /jobs/run/status: %d, want 200", r.StatusCode)
	}
}
