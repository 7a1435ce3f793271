package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Express (by default) and ASP.NET Core route paths in any case: a client
// changing the case of /bulk must pay what "POST /bulk" costs. Of costs
// whose patterns differ only in case, the larger is paid.
func TestACaseChangeDoesNotLowerACost(t *testing.T) {
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)},
		Costs: map[string]int64{"POST /bulk": 10, "POST /Items/{id}": 5, "POST /items/{id}": 4}}}
	for _, c := range []struct {
		path  string
		posts int
		want  []int
	}{
		{"/BULK", 1, []int{200, 429}},
		{"/Bulk/", 1, []int{200, 429}},
		{"/ITEMS/7", 2, []int{200, 200, 429}}, // 5 and 5 of 10
	} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		rs := repeat(req{method: "POST", path: c.path, remote: "192.0.2.1:1"}, c.posts)
		rs = append(rs, req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if got := statuses(mw, rs...); !slices.Equal(got, c.want) {
			t.Errorf("POST %s ×%d, then GET /other: %v, want %v", c.path, c.posts, got, c.want)
		}
	}
}

// Of costs whose patterns are one route once in lower case, however they
// write it (a wildcard renamed, a subtree as {name...}), the larger is paid
// by a path in another case, on every start: the costs reach the Mux in
// the map's random order, so the test starts the middleware 50 times.
func TestACaseChangePaysTheLargerCostOfTheRouteHoweverWritten(t *testing.T) {
	for _, c := range []struct {
		costs map[string]int64
		path  string
		posts int
		want  []int
	}{
		{map[string]int64{"POST /Items/{id}": 5, "POST /items/{key}": 4}, "/ITEMS/7", 2, []int{200, 200, 429}},
		{map[string]int64{"POST /Bulk/": 10, "POST /bulk/{rest...}": 2}, "/BULK/x", 1, []int{200, 429}},
	} {
		plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: c.costs}}
		for start := range 50 {
			mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
			rs := repeat(req{method: "POST", path: c.path, remote: "192.0.2.1:1"}, c.posts)
			rs = append(rs, req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
			if got := statuses(mw, rs...); !slices.Equal(got, c.want) {
				t.Errorf("costs %v, start %d: POST %s ×%d, then GET /other: %v, want %v", c.costs, start, c.path, c.posts, got, c.want)
				break
			}
		}
	}
}

// A cost whose pattern names wildcards alike but for case ({A} and {a},
// {Id} and {id}: two names to ServeMux and routes.CheckPath) is paid by a
// path in another case, as the same route written with {x} and {y} is:
// the patterns' literals are lowered for reading 7, not their wildcards'
// names, which lowered would be one name twice.
func TestACaseChangeKeepsTheCostOfAPatternWithWildcardsNamedAlikeButForCase(t *testing.T) {
	for _, c := range []struct {
		cost, path string
	}{
		{"POST /bulk/{A}/{a}", "/BULK/x/y"},
		{"POST /Bulk/{Id}/{id}", "/bulk/x/y"},
		{"POST /bulk/{x}/{y}", "/BULK/x/y"}, // the same route, other names
	} {
		plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)},
			Costs: map[string]int64{c.cost: 10}}}
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		got := statuses(mw, req{method: "POST", path: c.path, remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("cost %q: 10 of 10: POST %s, then GET /other: %v, want %v (the POST paid less than 10)", c.cost, c.path, got, want)
		}
	}
}

// POST /api/v2/bulk costs 10 ("POST /api/v2/{op}"), and so does POST
// /Api/v2/bulk beside "POST /API/{version}/bulk" (cost 1), whose path in
// lower case ServeMux cannot hold beside "/api/v2/{op}" (neither is more
// specific): the path in lower case is read against both, and against the
// patterns as written, as the path spelled in lower case is.
func TestACaseChangeDoesNotLowerACostBesideAPatternClashingInLowerCase(t *testing.T) {
	costs := map[string]int64{"POST /API/{version}/bulk": 1, "POST /api/v2/{op}": 10}
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: costs}}
	for _, path := range []string{"/api/v2/bulk", "/Api/v2/bulk"} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		got := statuses(mw, req{method: "POST", path: path, remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("costs %v, 10 of 10: POST %s, then GET /other: %v, want %v (the POST paid less than POST /api/v2/bulk's 10)", costs, path, got, want)
		}
	}
}

// A request spelled as a cost's pattern pays that pattern's cost, beside a
// less specific pattern that its path in lower case matches as written
// ("GET /api/" for /api/health, "/" for every path). No upstream routes GET
// /api/Health to "GET /api/": a case-sensitive one routes it as written, a
// case-insensitive one (Express, ASP.NET Core) too, and reading 7 reads
// /api/health against the patterns in lower case, where "GET /api/health"
// is the more specific. So a free route stays free.
func TestARequestSpelledAsAFreePatternIsFreeBesideALessSpecificCost(t *testing.T) {
	for _, c := range []struct {
		costs               map[string]int64
		method, path, other string // other costs 2
	}{
		{map[string]int64{"GET /api/Health": 0, "GET /api/": 2}, "GET", "/api/Health", "/api/other"},
		{map[string]int64{"GET /Status": 0, "/": 2}, "GET", "/Status", "/other"},
		// A gRPC health check (full methods are case-sensitive), beside a
		// cost of 2 for every other method.
		{map[string]int64{"POST /grpc.health.v1.Health/Check": 0, "/": 2}, "POST", "/grpc.health.v1.Health/Check", "/other"},
	} {
		plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}, Costs: c.costs}}
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		rs := repeat(req{method: c.method, path: c.path, remote: "192.0.2.1:1"}, 5)
		rs = append(rs, repeat(req{method: "GET", path: c.other, remote: "192.0.2.1:1"}, 2)...)
		// Five free requests spend nothing: the other path (2 of 2) is still admitted once.
		want := []int{200, 200, 200, 200, 200, 200, 429}
		if got := statuses(mw, rs...); !slices.Equal(got, want) {
			t.Errorf("costs %v: %s %s ×5 (free), then GET %s ×2 (2 of 2 each): %v, want %v (the free route was charged)",
				c.costs, c.method, c.path, c.other, got, want)
		}
	}
}

// A cost's pattern with an escaped letter ("/%41pi/bulk", the route
// /Api/bulk as ServeMux reads it) is paid in another case as any other:
// reading 7 reads /api/bulk and /API/bulk against the pattern's literals
// unescaped and in lower case, as a rule of paths ["/%41pi/bulk"] takes
// them.
func TestACaseChangePaysTheCostOfAPatternWithAnEscapedLetter(t *testing.T) {
	costs := map[string]int64{"POST /%41pi/bulk": 10}
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: costs}}
	for _, path := range []string{"/Api/bulk", "/api/bulk", "/API/bulk"} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		got := statuses(mw, req{method: "POST", path: path, remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("costs %v, 10 of 10: POST %s, then GET /other: %v, want %v (the POST paid less than 10)", costs, path, got, want)
		}
	}
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/%41pi/bulk"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{{req{method: "POST", path: "/api/bulk"}, true}, {req{method: "POST", path: "/API/bulk"}, true}})
}
