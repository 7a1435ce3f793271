package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// serveDesign loads the configuration cfgText as sluice check does, serves
// it through httplimit on a memory store, sends method path n times from
// one address and returns the statuses.
func serveDesign(t *testing.T, cfgText, method, path string, n int) []int {
	t.Helper()
	cfg, err := config.Parse("design.yaml", []byte(cfgText))
	if err != nil {
		t.Fatalf("sluice check refuses the configuration written: %v\n%s", err, cfgText)
	}
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	mw, err := httplimit.New(sluice.NewLimiter(st), cfg.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var codes []int
	for range n {
		r := httptest.NewRequest(method, path, nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		codes = append(codes, w.Code)
	}
	return codes
}

// The exempt routes are one ServeMux, and a request any of them matches is
// exempt before any rule or cost, whatever route another endpoint writes:
// "GET /x/{id}" and the subtree "GET /x/" take every request of "GET
// /x/y", and "GET /x" every one of "HEAD /x" (ServeMux's GET matches
// HEAD). A limit, limits or cost there would be written and never applied
// (served, the 1/1h limit admits every request, the cost of 40 against
// 50/1m spends nothing), so it is refused, naming the endpoint.
func TestDesignAPIRefusesALimitOnARouteAnExemptionTakesWhole(t *testing.T) {
	for _, c := range []struct{ exempt, limited, field string }{
		{"GET /x/{id}", "GET /x/y", "limit: 1/1h"},
		{"GET /x/", "GET /x/y", "limit: 1/1h"},
		{"GET /x/", "GET /x/{id}/", "limits: {free: 1/1h}"},
		{"GET /x", "HEAD /x", "limit: 1/1h"},
		{"GET /x/{id}", "GET /x/y", "cost: 40"},
	} {
		t.Run(c.exempt+" "+c.limited+" "+c.field, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1m}]}]\nendpoints: [{route: \"" + c.exempt + "\", exempt: true}, " +
				"{route: \"" + c.limited + "\", " + c.field + "}]\n"
			designIsRefused(t, text, "endpoints[1]", c.exempt+" takes every request of "+c.limited)
		})
	}
}

// A route only some of whose requests an exempt route takes keeps its
// limit for the others: "GET /x/y" exempt beside a limit on "GET /x/{id}"
// leaves it GET /x/z, "GET /x/{$}" a limit on the subtree "GET /x/" all
// below it, "HEAD /x" a limit on "GET /x" the GETs. The design loads, and
// the second request of the limit's 1 an hour is refused.
func TestDesignAPIKeepsALimitOnARouteAnExemptionTakesInPart(t *testing.T) {
	for _, c := range []struct{ exempt, limited, method, path string }{
		{"GET /x/y", "GET /x/{id}", "GET", "/x/z"},
		{"GET /x/{$}", "GET /x/", "GET", "/x/z"},
		{"HEAD /x", "GET /x", "GET", "/x"},
	} {
		t.Run(c.limited, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1m}]}]\nendpoints: [{route: \"" + c.exempt + "\", exempt: true}, " +
				"{route: \"" + c.limited + "\", limit: 1/1h}]\n"
			a := designAPI(t, text)
			if codes := serveDesign(t, a.Config, c.method, c.path, 2); codes[1] != http.StatusTooManyRequests {
				t.Errorf("%s %s: statuses %v, want the second 429\n%s", c.method, c.path, codes, a.Config)
			}
		})
	}
}

// One route exempted twice, however it is written ("GET /x/{a}", "GET
// /x/{b}"; the subtree "GET /z/" and "GET /z/{rest...}"), or put twice in
// one class, is one route: written once, the configuration loads (one
// ServeMux refuses the two spellings together).
func TestDesignAPIWritesARouteExemptedTwiceOnce(t *testing.T) {
	text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\n" +
		"endpoints: [{route: \"GET /x/{a}\", exempt: true}, {route: \"GET /x/{b}\", exempt: true}, " +
		"{route: \"GET /z/\", exempt: true}, {route: \"GET /z/{rest...}\", exempt: true}, " +
		"{route: \"POST /y/{a}\", class: expensive}, {route: \"POST /y/{b}\", class: expensive}, " +
		"{route: \"POST /w/{rest...}\", class: expensive}, {route: \"POST /w/\", class: expensive}]\n" +
		"overload: {in_flight: 500}\n"
	a := designAPI(t, text)
	cfg, err := config.Parse("design.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("sluice check refuses the configuration written: %v\n%s", err, a.Config)
	}
	if len(cfg.Exempt) != 2 || len(cfg.Degradation.Expensive) != 2 {
		t.Errorf("exempt %q, expensive %q: want each route once", cfg.Exempt, cfg.Degradation.Expensive)
	}
}

// A subtree and its {name...} spelling ("GET /x/", "GET /x/{rest...}") are
// one route, which is in one class: put in two, it is refused.
func TestDesignAPIRefusesASubtreeInTwoClassesUnderTwoSpellings(t *testing.T) {
	text := "plans: [{name: free, limits: [{rate: 50/1s}]}]\n" +
		"endpoints: [{route: \"GET /x/\", class: expensive}, {route: \"GET /x/{rest...}\", class: critical}]\n" +
		"overload: {in_flight: 500}\n"
	designIsRefused(t, text, "endpoints[1].class", "the route is in two classes")
}

// Exempt routes that take a subtree's root and the first two segments
// below it ("GET /docs/{$}", "GET /docs/{page}", "GET
// /docs/{section}/{page}") leave a limit on the subtree every request
// deeper (GET /docs/a/b/c): it is designed, and applied there.
func TestDesignAPIKeepsALimitOnASubtreeBelowItsExemptions(t *testing.T) {
	for _, limited := range []string{"GET /docs/", "GET /docs/{rest...}"} {
		t.Run(limited, func(t *testing.T) {
			text := "plans: [{name: free, limits: [{rate: 50/1m}]}]\nendpoints: [" +
				"{route: \"GET /docs/{$}\", exempt: true}, {route: \"GET /docs/{page}\", exempt: true}, " +
				"{route: \"GET /docs/{section}/{page}\", exempt: true}, {route: \"" + limited + "\", limit: 1/1h}]\n"
			a := designAPI(t, text)
			if codes := serveDesign(t, a.Config, "GET", "/docs/a/b/c", 2); codes[1] != http.StatusTooManyRequests {
				t.Errorf("GET /docs/a/b/c: statuses %v, want the second 429\n%s", codes, a.Config)
			}
		})
	}
}

// The analysis says an endpoint whose every request an exempt route takes
// ("GET /x/y" beside an exempt "GET /x/{id}") is never limited, naming
// that route, not that it costs a unit.
func TestDesignAPIAnalysisSaysAnEndpointAnExemptionTakesIsNeverLimited(t *testing.T) {
	text := "plans: [{name: free, limits: [{rate: 1/1h}]}]\n" +
		"endpoints: [{route: \"GET /x/{id}\", exempt: true}, {route: \"GET /x/y\"}]\n"
	a := designAPI(t, text)
	if codes := serveDesign(t, a.Config, "GET", "/x/y", 2); codes[1] != http.StatusOK {
		t.Fatalf("premise: GET /x/y statuses %v, want exempt", codes)
	}
	want := "- `GET /x/y`: never limited: the exempt route `GET /x/{id}` takes every request of it."
	if !strings.Contains(a.Markdown, want+"\n") {
		t.Errorf("analysis lacks %q:\n%s", want, a.Markdown)
	}
}

// capacity is written as the global limit, named "global", and config
// refuses a plan's limit of a global limit's name: a plan's limit so named
// is refused beside capacity, naming it, and designed without it.
func TestDesignAPIRefusesAPlanLimitNamedAsTheGlobalLimit(t *testing.T) {
	plans := "plans: [{name: free, limits: [{rate: 50/1m, name: global}]}]\n"
	designIsRefused(t, "capacity: 100/1s\n"+plans, "plans[0].limits[0].name", "the global limit has that name")
	if _, err := designText(plans); err != nil {
		t.Errorf("without capacity: %v", err)
	}
}
