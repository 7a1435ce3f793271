package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// IIS's http.sys (and ASP.NET, URL Rewrite and ARR on IIS) decodes %5C to
// a backslash, takes it for a slash, and then resolves dot segments:
// /api%5Cadmin/users is /api/admin/users there, and
// /public/..%5Capi%5Cgenerate is /api/generate. A client writing its
// slashes as backslashes escapes no rule, pays no less than the route's
// cost, and gains no exemption of the subtree it names on the way.
func TestABackslashIsReadAsASlash(t *testing.T) {
	t.Run("a rule", func(t *testing.T) {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "admin", Paths: []string{"/api/admin/"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		from := func(path string) req { return req{path: path, remote: "192.0.2.1:1"} }
		got := statuses(mw, from("/api/admin/users"), from("/api%5Cadmin/users"), from(`/api\admin\users`),
			from("/API%5CAdmin/users"), from("/x/..%5Capi/admin/users"))
		if want := []int{200, 429, 429, 429, 429}; !slices.Equal(got, want) {
			t.Errorf(`/api/admin/users, /api%%5Cadmin/users, /api\admin\users, /API%%5CAdmin/users, /x/..%%5Capi/admin/users: %v, want %v`, got, want)
		}
	})
	t.Run("a cost", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: map[string]int64{"POST /bulk": 10}}}})
		got := statuses(mw, req{method: "POST", path: "/x%5C..%5Cbulk", remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("POST /x%%5C..%%5Cbulk (10 of 10), then GET /other: %v, want %v", got, want)
		}
	})
	t.Run("an exempt subtree", func(t *testing.T) {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: []*httplimit.Plan{{Name: "free",
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}, Exempt: []string{"GET /public/"}})
		got := statuses(mw, repeat(req{path: "/public/..%5Capi%5Cgenerate", remote: "192.0.2.1:1"}, 2)...)
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("/public/..%%5Capi%%5Cgenerate twice: %v, want %v: limited as /api/generate", got, want)
		}
		got = statuses(mw, repeat(req{path: "/public/css%5Csite.css", remote: "192.0.2.2:1"}, 3)...)
		if want := []int{200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("/public/css%%5Csite.css three times: %v, want %v: still in the exempt subtree", got, want)
		}
	})
}

// The reading with backslashes as slashes puts the path's segments
// otherwise, so except_paths weigh it apart: an exception that the path
// as written matches leaves out none of it, and one that it alone matches
// leaves out no other reading. No client moves a request out of a rule
// by writing a slash as a backslash.
func TestExceptPathsLeaveOutNoRequestByABackslash(t *testing.T) {
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/"}, ExceptPaths: []string{"/api/admin/"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{path: "/api/admin/users"}, false},
		{req{path: "/api%5Cadmin/users"}, false},              // IIS: /api/admin/users
		{req{path: "/api/admin/..%5Csearch"}, true},           // IIS: /api/search
		{req{path: "/API/Admin/..%5CSearch"}, true},           // IIS: /API/Search
		{req{path: "/api/search%5C..%5Cadmin%5Cusers"}, true}, // IIS: /api/admin/users, one segment below /api/ to ServeMux
	})
}
