package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// An exception of a subtree (or of its root alone, {$}) leaves out the
// subtree's root with its trailing slash, whole (nginx's location
// /api/admin/, ServeMux's pattern and Express's router all take GET
// /api/admin/, and it is not read as /api/admin below /api/), but not
// that root without the slash: /api/admin and /api/admin.json stay the
// rule's. Upstreams differ on /api/admin (ServeMux, and nginx proxying
// from location /api/admin/, redirect it to /api/admin/; Express, Rails
// and nginx serving location /api/admin/ from disk serve it as a route
// of its own, nginx from location /api/), and counting it is the side
// that leaves it unlimited on none.
func TestAnExceptedSubtreeKeepsItsRootWithoutTheSlashInTheRule(t *testing.T) {
	subtree := []ruledCase{
		{req{path: "/api/admin/x"}, false},
		{req{path: "/api/admin/"}, false},
		{req{path: "/API/Admin/"}, false},
		{req{path: "/api/admin;x/"}, false},
		{req{path: "/api/admin"}, true},
		{req{path: "/api/admin.json"}, true},
		{req{path: "/API/Admin"}, true},
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
		{req{path: "/api/admin"}, true},
		{req{path: "/api/admin/x"}, true},
	})
}

// The usual pair, a rule of /api/ leaving out /api/admin/ and a rule of
// its own for /api/admin/, counts GET /api/admin by one of them: the
// first, as the admin rule's pattern does not match it. No client is
// admitted past both limits by dropping the slash.
func TestAnExceptedSubtreesRootIsCountedByTheShorterRule(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: big()}},
		Rules: []httplimit.Rule{
			{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{"/api/admin/"},
				Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}},
			{Name: "admin", Paths: []string{"/api/admin/"},
				Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}},
		},
	})
	got := statuses(mw, req{path: "/api/admin"}, req{path: "/api/admin"}, req{path: "/api/admin"})
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("GET /api/admin three times, rules api (/api/ except /api/admin/, 1/min) and admin (/api/admin/, 1/min): %v, want %v", got, want)
	}
}

// A plan's cost of an excepted subtree's route ("POST /v1/admin/": 50)
// charges its root without the slash too, as ServeMux redirects POST
// /v1/admin (and /v1/admin.json, /v1/admin read without its suffix)
// there, and the rule of /v1/ counts those requests at that cost: its
// limit must hold 50 (sluice check refuses one that does not), while
// what is below /v1/admin/ is not the rule's.
func TestTheCostOfAnExceptedSubtreeChargedToItsRootIsTheRules(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: big(), Costs: map[string]int64{"POST /v1/admin/": 50}}},
		Rules: []httplimit.Rule{{Name: "api", Paths: []string{"/v1/"}, ExceptPaths: []string{"/v1/admin/"},
			Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
	})
	got := statuses(mw, req{method: "POST", path: "/v1/admin/x"}, req{method: "POST", path: "/v1/admin/x"},
		req{method: "POST", path: "/v1/admin/x"}, req{method: "POST", path: "/v1/admin"},
		req{method: "POST", path: "/v1/admin.json"}, req{method: "POST", path: "/v1/admin"})
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("POST /v1/admin/x thrice, then /v1/admin, /v1/admin.json, /v1/admin: %v, want %v", got, want)
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
