package httplimit_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// An except_paths pattern leaves out the route it names under every
// spelling that the rule's own paths and a plan's costs read as that
// route: with its trailing slash, its path parameters, a format suffix,
// escaped, in another case. It leaves out no other path: /v1/bulkfoo and
// /v1/bulk/x stay the rule's of /v1/.
func TestExceptPathsLeaveOutEveryReadingOfTheRouteTheyName(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/v1/"}, ExceptPaths: []string{"/v1/bulk"}, Limits: big()})
	expectRuled(t, mw, exceptedBulk())
}

// An Except entry's paths leave out what the same except_paths do, under
// the same readings, of a request its other fields match.
func TestExceptEntryPathsLeaveOutEveryReadingOfTheRouteTheyName(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/v1/"},
		Except: []httplimit.Match{{Methods: []string{"POST"}, Paths: []string{"/v1/bulk"}}}, Limits: big()})
	expectRuled(t, mw, exceptedBulk())
	expectRuled(t, mw, []ruledCase{{req{method: "GET", path: "/v1/bulk/"}, true}})
}

// exceptedBulk are POSTs under /v1/ and whether a rule of /v1/ that
// leaves out /v1/bulk applies to them.
func exceptedBulk() []ruledCase {
	post := func(p string) req { return req{method: "POST", path: p} }
	return []ruledCase{
		{post("/v1/bulk"), false},
		{post("/v1/bulk/"), false},       // Express, Rails, Laravel: /v1/bulk
		{post("/v1/bulk.json"), false},   // Rails: /v1/bulk
		{post("/v1/bulk;jsid=1"), false}, // Tomcat, Jetty, Spring: /v1/bulk
		{post("/v1/BULK"), false},        // Express, ASP.NET Core: /v1/bulk
		{post("/v1/%62ulk/"), false},
		{post("/v1/Bulk.JSON/"), false},
		{post("/v1/bulkfoo"), true},
		{post("/v1/bulk/x"), true},
		{post("/v1/bulk.json/x"), true},
		{post("/v1/other"), true},
	}
}

// A request that a plan's cost of the excepted route charges is not
// charged to the rule either: a rule of /v1/ whose limit holds 5, beside
// "POST /v1/bulk" costing 50, refused every POST /v1/bulk/ and
// /v1/bulk.json, which the route it leaves out serves.
func TestExceptPathsSpareTheCostOfTheRouteTheyLeaveOut(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: big(), Costs: map[string]int64{"POST /v1/bulk": 50}}},
		Rules: []httplimit.Rule{{Name: "api", Paths: []string{"/v1/"}, ExceptPaths: []string{"/v1/bulk"},
			Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
	})
	got := statuses(mw, req{method: "POST", path: "/v1/bulk"}, req{method: "POST", path: "/v1/bulk/"},
		req{method: "POST", path: "/v1/bulk.json"}, req{method: "POST", path: "/v1/BULK"})
	if want := []int{200, 200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/bulk, /v1/bulk/, /v1/bulk.json, /v1/BULK: %v, want %v", got, want)
	}
}

// A reading that puts the path's segments otherwise — an escaped slash
// or dot segment, a ".." segment carrying parameters — is another
// upstream's route, not a spelling of the excepted one: a request that
// one of its readings gives to the excepted path, and another to the
// rule's, stays the rule's, so that no client moves a request out of the
// rule by such a path.
func TestExceptPathsLeaveOutNoRequestThatAnotherReadingRoutesToTheRule(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{"/api/admin/"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/api/admin/x"}, false},
		{req{path: "/api/admin/..%2Fsearch"}, true},   // decoded: /api/search
		{req{path: "/api/admin/%2E%2E/search"}, true}, // decoded: /api/search
		{req{path: "/api/x%2F..%2Fadmin/y"}, true},    // ServeMux: one segment below /api/
		{req{path: "/api/search/..;/admin/x"}, true},  // as written: below /api/search/
		{req{path: "/api/;x/admin/y"}, true},          // as written: below /api/{id}/
		{req{path: "/api/admin;x/y"}, false},          // /api/admin/y, its segments kept
		{req{path: "/api/Admin/y/"}, false},           // /api/admin/y
		{req{path: "/api/admin%2Fy"}, true},           // ServeMux: one segment "admin/y"
	})
	// The format suffix is read only under a pattern it steps off: a rule
	// of /v1/login keeps /v1/login.json though its except_paths name it.
	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/v1/{name}", "/v1/login"},
		ExceptPaths: []string{"/v1/login.json"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{{req{path: "/v1/login.json"}, true}, {req{path: "/v1/status.json"}, true}})
}

// Weighing the respellings of an excepted route allocates nothing: a
// request left out by one, or not, allocates less than once on average.
// (A path with upper-case letters is lowered once per request, for the
// readings in lower case.)
func TestExceptReadingsAreWeighedWithoutAllocating(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector (sync.Pool drops items)")
	}
	cfg := hotPlan(t, 1)
	store := memory.New(memory.WithSweepInterval(0))
	defer store.Close()
	o := quiet(cfg)
	o.Rules = []httplimit.Rule{{Name: "api", Paths: []string{"/v1/"}, ExceptPaths: []string{"/v1/bulk", "/v1/admin/"},
		Except: []httplimit.Match{{Methods: []string{"POST"}, Paths: []string{"/v1/jobs/{id}"}}}, Key: []string{"route"}, Limits: big()}}
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	for _, c := range []struct {
		path string
		rule bool
	}{{"/v1/items/42", true}, {"/v1/bulk/", false}, {"/v1/bulk.json", false}, {"/v1/jobs/7/", false}, {"/v1/admin/x.json/", false}} {
		r, _ := http.NewRequest("POST", "http://api.example"+c.path, nil)
		r.Header.Set("X-API-Key", "the-key")
		n, w := allocsPerServe(h, r)
		if n >= 1 { // n is rounded down
			t.Errorf("%s: %.0f allocations per admitted request, want less than 1", c.path, n)
		}
		if got := strings.Contains(strings.Join(w.h["Ratelimit-Policy"], ","), "api."); w.status != 200 || got != c.rule {
			t.Errorf("%s: status %d, the rule's %v, want %v", c.path, w.status, got, c.rule)
		}
	}
}
