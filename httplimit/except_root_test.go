package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// An exception of a subtree (or of its root alone, {$}) leaves out the
// subtree's root, with and without its trailing slash: nginx's location
// /api/admin/, ServeMux's pattern and Express's router all take GET
// /api/admin/, and ServeMux redirects GET /api/admin there (Rails reads
// /api/admin.json as /api/admin). Only the root is left out with it, not
// /api/adminx or what is below /api/admin.json/. A path of the rule that
// names the root itself ("/api/admin", which ServeMux routes /api/admin
// to rather than redirect it) keeps it.
func TestAnExceptedSubtreeLeavesOutItsOwnRoot(t *testing.T) {
	subtree := []ruledCase{
		{req{path: "/api/admin/x"}, false},
		{req{path: "/api/admin/"}, false},
		{req{path: "/api/admin"}, false},
		{req{path: "/api/admin.json"}, false},
		{req{path: "/API/Admin/"}, false},
		{req{path: "/api/admin;x/"}, false},
		{req{path: "/api/adminx"}, true},
		{req{path: "/api/admin.json/x"}, true},
		{req{path: "/api/x"}, true},
	}
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{"/api/admin/"}, Limits: big()})
	expectRuled(t, mw, subtree)
	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"},
		Except: []httplimit.Match{{Paths: []string{"/api/admin/"}}}, Limits: big()})
	expectRuled(t, mw, subtree)

	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{"/api/admin/{$}"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/api/admin/"}, false},
		{req{path: "/api/admin"}, false},
		{req{path: "/api/admin/x"}, true},
	})

	mw = exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/", "/api/admin"}, ExceptPaths: []string{"/api/admin/"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/api/admin"}, true},
		{req{path: "/api/admin/x"}, false},
	})
}

// A request that a plan's cost of an excepted subtree charges by its
// root without the slash (ServeMux redirects POST /v1/admin to
// "POST /v1/admin/"; Rails reads /v1/admin.json as /v1/admin) is not
// charged to the rule either: a rule of /v1/ whose limit holds 5 refused
// every one of them, which pay the excepted route's 50.
func TestAnExceptedSubtreeSparesTheCostItsRouteCharges(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: big(), Costs: map[string]int64{"POST /v1/admin/": 50}}},
		Rules: []httplimit.Rule{{Name: "api", Paths: []string{"/v1/"}, ExceptPaths: []string{"/v1/admin/"},
			Limits: []sluice.Limit{sluice.FixedWindow(5, time.Minute)}}},
	})
	got := statuses(mw, req{method: "POST", path: "/v1/admin/x"},
		req{method: "POST", path: "/v1/admin"}, req{method: "POST", path: "/v1/admin.json"})
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/admin/x, /v1/admin, /v1/admin.json: %v, want %v", got, want)
	}
}

// An escaped slash keeps its segment whole in any case: Express (by
// default) and ASP.NET Core, which route a path in any case, keep %2F
// inside the segment, so /API/admin%2Fy is one segment "admin/y" below
// /api/, the rule's beside except_paths: ["/api/admin/"], as
// /api/admin%2Fy is.
func TestAnEscapedSlashInAnotherCaseStaysTheRules(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{"/api/admin/"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/api/admin%2Fy"}, true},
		{req{path: "/API/admin%2Fy"}, true},
		{req{path: "/api/Admin%2Fy"}, true},
		{req{path: "/API/ADMIN/y"}, false},
	})
}
