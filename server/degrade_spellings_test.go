package server_test

import (
	"net/http"
	"testing"
)

// expensiveSpellings are spellings of POST /api/generate (shedConfig's
// expensive endpoint) that upstreams serve as that endpoint: Django folds
// a method's case, Express (not strict), Rails and ASP.NET Core drop a
// trailing slash, Tomcat, Jetty and Spring drop path parameters (and
// resolve "..;" then), Express and ASP.NET Core ignore the path's case,
// IIS reads a backslash (%5C) as a slash.
// methodCase: the spelling changes the method's case, which forward-auth
// and the decision API refuse to describe (400) rather than decide.
var expensiveSpellings = []struct {
	method, path string
	methodCase   bool
}{
	{"post", "/api/generate", true},
	{"POST", "/api/generate/", false},
	{"POST", "/api/generate;x=1", false},
	{"POST", "/api/generate;x=1/", false},
	{"POST", "/x/..;/api/generate", false},
	{"POST", "/API/Generate", false},
	{"POST", "/API/Generate/", false},
	{"POST", "/Api/Generate;v=2", false},
	{"POST", "/api%5Cgenerate", false},
	{"POST", "/x/..%5Capi%5Cgenerate", false},
}

// A client respelling an expensive endpoint is shed at level 1 as the
// endpoint is, on the reverse proxy, forward-auth and the decision API
// alike: shedding it is what keeps its work from the overloaded upstream.
// Before, each spelling reached the upstream at every level but 3.
func TestEveryRespellingOfAnExpensiveEndpointIsShed(t *testing.T) {
	f := newFixture(t, shedConfig)
	f.pin(t, "elevated")
	for _, c := range expensiveSpellings {
		what := "elevated, " + c.method + " " + c.path
		r := f.do(t, c.method, c.path, "", nil)
		if body := readAll(t, r); r.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%s through the proxy: %d %s, want 503 as POST /api/generate", what, r.StatusCode, body)
		}
		if c.methodCase {
			continue
		}
		wantShed(t, f.forwardAuth(t, c.method, c.path, "203.0.113.5"), http.StatusServiceUnavailable, "forward-auth, "+what)
		wantShedAnswer(t, f.check(t, `{"subject":"s","method":"`+c.method+`","path":"`+c.path+`"}`), "elevated", "decision API, "+what)
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("the upstream was reached %d times by an expensive endpoint at level 1", n)
	}
	// Other endpoints are not expensive however they are spelled.
	for _, path := range []string{"/api/generated", "/api/generate/x", "/api/orders;x=1"} {
		r := f.do(t, "POST", path, "", nil)
		if body := readAll(t, r); r.StatusCode != http.StatusOK {
			t.Errorf("elevated, POST %s through the proxy: %d %s, want 200", path, r.StatusCode, body)
		}
	}
}
