package httplimit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// ruled reports whether the rule named name applied to r: its limits are
// in the response's RateLimit-Policy.
func ruled(t *testing.T, mw *httplimit.Middleware, name string, r req) bool {
	t.Helper()
	w := do(mw.Handler(okHandler()), r)
	if w.Code != 200 {
		t.Fatalf("%s %s: status %d", r.method, r.path, w.Code)
	}
	return strings.Contains(w.Header().Get("RateLimit-Policy"), name+".")
}

// exceptMiddleware returns a middleware whose plan admits every request
// sent here, and rules.
func exceptMiddleware(t *testing.T, rules ...httplimit.Rule) *httplimit.Middleware {
	t.Helper()
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: big()}},
		Rules: rules,
	})
	return mw
}

func big() []sluice.Limit { return []sluice.Limit{sluice.FixedWindow(1_000_000, time.Minute)} }

// ruledCase is a request and whether rule "api" applies to it.
type ruledCase struct {
	r    req
	want bool
}

// expectRuled fails t for each request whose rule "api" applies otherwise
// than want says.
func expectRuled(t *testing.T, mw *httplimit.Middleware, want []ruledCase) {
	t.Helper()
	for _, c := range want {
		r, w := c.r, c.want
		if got := ruled(t, mw, "api", r); got != w {
			t.Errorf("%s %s %v: the rule applies %v, want %v", r.method, r.path, r.header, got, w)
		}
	}
}

func TestRuleExceptLeavesOutAPathOnOneHost(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/"},
		Except: []httplimit.Match{{Hosts: []string{"b.example"}, Paths: []string{"/health"}}},
		Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	a := req{path: "http://a.example/health"}
	if got, want := statuses(mw, a, a, a), []int{200, 200, 429}; got[2] != want[2] {
		t.Fatalf("a.example/health ×3: %v, want %v (the rule's: 2 a minute)", got, want)
	}
	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/"},
		Except: []httplimit.Match{{Hosts: []string{"b.example"}, Paths: []string{"/health"}}},
		Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	b := req{path: "http://b.example/health"}
	if got := statuses(mw, b, b, b, b); got[3] != 200 {
		t.Fatalf("b.example/health ×4: %v, want all 200 (left out of the rule: the plan's 10 a minute)", got)
	}
	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/"},
		Except: []httplimit.Match{{Hosts: []string{"b.example"}, Paths: []string{"/health"}}}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "http://b.example/other"}, true},
		{req{path: "http://B.EXAMPLE/health"}, false}, // the host in any case
		// A router that does not drop the root dot or the port (Envoy's
		// domains) gives these to another route: they stay the rule's.
		{req{path: "http://b.example./health"}, true},
		{req{path: "http://b.example../health"}, true},
		{req{path: "http://b.example:8080/health"}, true},
		{req{path: "http://c.b.example/health"}, true},
		{req{path: "http://a.example/health"}, true},
		{req{method: "POST", path: "http://b.example/health"}, false},
	})
}

func TestRuleExceptLeavesOutAMethod(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"},
		Except: []httplimit.Match{{Methods: []string{"OPTIONS"}}}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{method: "OPTIONS", path: "/api/x"}, false},
		{req{method: "GET", path: "/api/x"}, true},
		{req{method: "POST", path: "/api/x"}, true},
		// An upstream that does not fold a method's case does not serve
		// "options" as a preflight: it stays the rule's.
		{req{method: "options", path: "/api/x"}, true},
		{req{method: "OPTIONS", path: "/other"}, false}, // not the rule's anyway
	})
}

func TestRuleExceptGETLeavesHEADCounted(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api",
		Except: []httplimit.Match{{Methods: []string{"GET"}}}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{method: "GET", path: "/x"}, false},
		{req{method: "HEAD", path: "/x"}, true}, // a router matching GET exactly gives HEAD to the rule's route
	})
}

func TestRuleExceptByHeaderNeedsItsOneValue(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api",
		Except: []httplimit.Match{{Headers: []httplimit.HeaderMatch{{Name: "x-internal", Value: "1"}}}}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{header: map[string]string{"X-Internal": "1"}}, false},
		{req{header: map[string]string{"X-Internal": "2"}}, true},
		{req{}, true},
	})
	// A router reading the values joined ("1,2", as Envoy does) takes
	// neither for its route of "1": the rule's.
	if !ruled(t, mw, "api", req{multi: map[string][]string{"X-Internal": {"1", "2"}}}) {
		t.Errorf("X-Internal: 1 and X-Internal: 2: left out, want the rule's")
	}
	if !ruled(t, mw, "api", req{multi: map[string][]string{"X-Internal": {"1", "1"}}}) {
		t.Errorf("X-Internal: 1 twice: left out, want the rule's (joined, \"1,1\" is not \"1\")")
	}
}

func TestRuleExceptEntryNeedsAllItsFields(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api",
		Except: []httplimit.Match{{Methods: []string{"POST"}, Hosts: []string{"*.internal.example"}, Paths: []string{"/jobs/{id}"},
			Headers: []httplimit.HeaderMatch{{Name: "X-Job"}}}}, Limits: big()})
	job := map[string]string{"X-Job": ""}
	expectRuled(t, mw, []ruledCase{
		{req{method: "POST", path: "http://a.internal.example/jobs/7", header: job}, false},
		{req{method: "GET", path: "http://a.internal.example/jobs/7", header: job}, true},
		{req{method: "POST", path: "http://internal.example/jobs/7", header: job}, true},
		{req{method: "POST", path: "http://a.internal.example/jobs/7/x", header: job}, true},
		{req{method: "POST", path: "http://a.internal.example/jobs/7"}, true},
	})
}

func TestRuleExceptAppliesToEveryAlternative(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Any: []httplimit.Match{
		{Hosts: []string{"a.example"}, Paths: []string{"/orders/"}},
		{Hosts: []string{"b.example"}, Paths: []string{"/billing/"}},
	}, Except: []httplimit.Match{
		{Paths: []string{"/billing/internal/"}},
		{Hosts: []string{"a.example"}, Paths: []string{"/orders/archive"}},
		{Methods: []string{"DELETE"}},
	}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "http://a.example/orders/1"}, true},
		{req{path: "http://a.example/orders/archive"}, false},
		{req{path: "http://b.example/billing/1"}, true},
		{req{path: "http://b.example/billing/internal/x"}, false},
		{req{method: "DELETE", path: "http://b.example/billing/1"}, false},
		{req{method: "DELETE", path: "http://a.example/orders/1"}, false},
		{req{path: "http://a.example/billing/internal/x"}, false}, // neither alternative's
	})
}

// An except entry's paths are weighed under each reading of the path as
// ExceptPaths are: a respelling of the route they name (a trailing slash,
// path parameters, another case) is left out with it, and a reading that
// puts the path's segments otherwise (an escaped slash) respells none, so
// no path that an upstream routes elsewhere escapes the rule.
func TestRuleExceptPathSpellings(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"},
		Except: []httplimit.Match{{Hosts: []string{"b.example"}, Paths: []string{"/api/health", "/api/Status", "/api/internal/"}}},
		Limits: big()})
	on := func(p string) req { return req{path: "http://b.example" + p} }
	expectRuled(t, mw, []ruledCase{
		{on("/api/health"), false},
		{on("/api/%68ealth"), false}, // every reading is /api/health
		{on("/api/x/../health"), false},
		{on("/api/health/"), false},    // Express, Rails: /api/health, as its cost charges it
		{on("/api/health;v=1"), false}, // Tomcat: /api/health
		{on("/api/health%2Fx"), true},  // decoded /api/health/x
		{on("/api/HEALTH"), false},     // Express, ASP.NET Core: /api/health
		{on("/api/status"), false},     // Express, ASP.NET Core: /api/Status
		{on("/api/Status"), false},
		{on("/api/internal/jobs"), false},
		{on("/api/internal%2F..%2Fup"), true}, // ServeMux reads one segment below /api/internal/; decoded, /api/up
		{on("/api/internal/..%2Fup"), true},
		{on("/api%2Finternal/x"), false}, // decoded /api/internal/x; ServeMux's one segment "api/internal" is not /api/'s
	})
}

// An except entry of paths alone leaves out what the same ExceptPaths
// leave out, under every spelling.
func TestRuleExceptAgreesWithExceptPaths(t *testing.T) {
	patterns := []string{"/api/health", "/api/internal/", "/api/{v}/debug", "/api/Status", "/api/x/{$}", "/api/files/{p...}"}
	ex := httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: patterns, Limits: big()}
	en := httplimit.Rule{Name: "api", Paths: []string{"/api/"}, Except: []httplimit.Match{{Paths: patterns}}, Limits: big()}
	mwEx, mwEn := exceptMiddleware(t, ex), exceptMiddleware(t, en)
	for _, p := range exceptSpellings {
		r := req{path: "http://a.example" + p}
		if a, b := ruled(t, mwEx, "api", r), ruled(t, mwEn, "api", r); a != b {
			t.Errorf("%s: except_paths leave it the rule's: %v; except: %v", p, a, b)
		}
	}
}

// exceptSpellings are paths spelled as clients may spell them to escape
// a rule.
var exceptSpellings = []string{
	"/api/health", "/api/health/", "/api/Health", "/API/HEALTH", "/api/health;x=1", "/api/%68ealth", "/api/health%2F",
	"/api/health%2Fx", "/api/internal", "/api/internal/", "/api/internal/a", "/api/Internal/a", "/api/internal;x/a",
	"/api/internal%2Fa", "/api/internal%2F..%2Fa", "/api/x%2F..%2Finternal/a", "/api/v1/debug", "/api/v1/debug/", "/api/v1%2Fv2/debug",
	"/api/status", "/api/Status", "/api/STATUS;a", "/api/x/", "/api/x", "/api/x%2F", "/api/files/a/b", "/api/files", "/api/files%2Fa",
	"/api/a/../health", "/api/.;/health", "/api/..;/api/health", "/api/x/..;/health", "/api", "/api/",
}

// A request a rule's Except leaves out allocates less than once on
// average, and one it does not leave out likewise: the entries are tried
// in place. (A path spelled in another case than the rule's patterns is
// lowered once per request, as it is for a rule without Except.)
func TestRuleExceptMatchesWithoutAllocating(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector (sync.Pool drops items)")
	}
	cfg := hotPlan(t, 1)
	store := memory.New(memory.WithSweepInterval(0))
	defer store.Close()
	o := quiet(cfg)
	o.Rules = []httplimit.Rule{{Name: "api", Paths: []string{"/v1/"}, Except: []httplimit.Match{
		{Hosts: []string{"internal.example"}},
		{Methods: []string{"OPTIONS"}},
		{Hosts: []string{"api.example"}, Paths: []string{"/v1/health", "/v1/Status"}, Headers: []httplimit.HeaderMatch{{Name: "X-Probe"}}},
	}, Key: []string{"route"}, Limits: big()}}
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	for _, c := range []struct {
		path  string
		probe bool
		rule  bool
	}{{"/v1/items/42", false, true}, {"/v1/health", true, false}, {"/v1/health", false, true}} {
		r, _ := http.NewRequest("POST", "http://api.example"+c.path, nil)
		r.Header.Set("X-API-Key", "the-key")
		if c.probe {
			r.Header.Set("X-Probe", "1")
		}
		n, w := allocsPerServe(h, r)
		if n >= 1 { // n is rounded down
			t.Errorf("%s: %.0f allocations per admitted request, want less than 1", c.path, n)
		}
		if got := strings.Contains(strings.Join(w.h["Ratelimit-Policy"], ","), "api."); w.status != 200 || got != c.rule {
			t.Errorf("%s: status %d, the rule's %v, want %v", c.path, w.status, got, c.rule)
		}
	}
}

func TestRuleExceptValidated(t *testing.T) {
	for _, c := range []struct {
		name  string
		exc   []httplimit.Match
		field string
	}{
		{"empty", []httplimit.Match{{}}, "Rules[0].Except[0]"},
		{"nested", []httplimit.Match{{Paths: []string{"/a/"}, ExceptPaths: []string{"/a/b"}}}, "Rules[0].Except[0].ExceptPaths"},
		{"bad path", []httplimit.Match{{Hosts: []string{"a.example"}}, {Paths: []string{"a"}}}, "Rules[0].Except[1].Paths[0]"},
		{"bad method", []httplimit.Match{{Methods: []string{"GE T"}}}, "Rules[0].Except[0].Methods[0]"},
		{"bad host", []httplimit.Match{{Hosts: []string{"a.example:80"}}}, "Rules[0].Except[0].Hosts[0]"},
		{"bad header", []httplimit.Match{{Headers: []httplimit.HeaderMatch{{Name: "X Y"}}}}, "Rules[0].Except[0].Headers[0].Name"},
	} {
		o := httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
			Rules: []httplimit.Rule{{Name: "api", Except: c.exc, Limits: big()}},
		}
		err := o.Validate()
		var fe *httplimit.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a FieldError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want it to name %s", c.name, err, c.field)
		}
	}
}

// FuzzRuleExceptAgreesWithExceptPaths: an except entry of a path pattern
// alone leaves out of a rule what the same pattern in ExceptPaths leaves
// out, for any request path.
func FuzzRuleExceptAgreesWithExceptPaths(f *testing.F) {
	for _, s := range [][2]string{{"/api/health", "/api/%68ealth"}, {"/api/internal/", "/api/internal%2F..%2Fa"},
		{"/api/{v}/debug", "/API/V1/DEBUG;x"}, {"/api/Status", "/api/STATUS/"}, {"/api/x/{$}", "/api/x%2F"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		ex := httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{pattern}, Limits: big()}
		en := httplimit.Rule{Name: "api", Paths: []string{"/api/"}, Except: []httplimit.Match{{Paths: []string{pattern}}}, Limits: big()}
		o := httplimit.Options{Plans: []*httplimit.Plan{{Name: "free", Limits: big()}}, Rules: []httplimit.Rule{ex}}
		if o.Validate() != nil {
			return
		}
		u, err := url.ParseRequestURI(path)
		if err != nil || !strings.HasPrefix(path, "/") {
			return
		}
		r := &http.Request{Method: "GET", URL: u, Host: "a.example", Header: http.Header{}, RemoteAddr: "192.0.2.1:1"}
		var got [2]bool
		for i, ru := range []httplimit.Rule{ex, en} {
			w := httptest.NewRecorder()
			exceptMiddleware(t, ru).Handler(okHandler()).ServeHTTP(w, r)
			got[i] = strings.Contains(w.Header().Get("RateLimit-Policy"), "api.")
		}
		if got[0] != got[1] {
			t.Fatalf("pattern %q, path %q: the rule's with except_paths %v, with except %v", pattern, path, got[0], got[1])
		}
	})
}
