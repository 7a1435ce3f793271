package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A path with escapes ("/api%2Fgenerate", "/%61pi/generate") is one path
// to an upstream that decodes before routing (nginx) and another to one
// that routes by escaped segments (Go's ServeMux). Rules match the decoded
// path; costs and exemptions must not let either reading spend less: a
// request costs the most that either reading of its path costs, and is
// exempt only when both readings are.
func TestEscapedPathsSpendWhatEitherReadingCosts(t *testing.T) {
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(4, time.Minute)},
		Costs: map[string]int64{"POST /api/generate": 2}}
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans:  []*httplimit.Plan{free},
		Exempt: []string{"GET /public/{file}"},
	})
	h := mw.Handler(okHandler())
	for _, c := range []struct {
		name string
		r    req
		cost int64 // what the request spends of the 4 a minute
	}{
		{"the plain path", req{method: "POST", path: "/api/generate", remote: "192.0.2.1:1"}, 2},
		{"an escaped slash", req{method: "POST", path: "/api%2Fgenerate", remote: "192.0.2.2:1"}, 2},
		{"an escaped letter", req{method: "POST", path: "/%61pi/generate", remote: "192.0.2.3:1"}, 2},
		{"exempt by its decoded path alone", req{path: "/public%2Fx", remote: "192.0.2.4:1"}, 1},
		{"exempt by its escaped path alone", req{path: "/public/a%2F..%2F..%2Fapi%2Fsearch", remote: "192.0.2.6:1"}, 1},
		{"exempt by both readings", req{path: "/public/%78", remote: "192.0.2.5:1"}, 0},
	} {
		w := do(h, c.r)
		got := w.Header().Get("RateLimit")
		switch {
		case w.Code != 200:
			t.Errorf("%s: %d, want 200", c.name, w.Code)
		case c.cost == 0 && got != "":
			t.Errorf("%s: RateLimit %q, want an exempt request (no fields)", c.name, got)
		case c.cost > 0 && got != `"per-minute";r=`+string(rune('0'+4-c.cost))+`;t=60`:
			t.Errorf("%s: RateLimit %q, want %d spent of 4", c.name, got, c.cost)
		}
	}
}

// DecideFor reads its path as a request URI: escaped, as a client sends it,
// so "/api/%73earch" is the "/api/search" of the rule and the cost.
func TestDecideForReadsAnEscapedPath(t *testing.T) {
	free := &httplimit.Plan{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)},
		Costs: map[string]int64{"POST /api/generate": 2}}
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{free},
		Rules: []httplimit.Rule{{Name: "search", Paths: []string{"/api/search"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
	})
	who := httplimit.Requester{Subject: "s"}
	for i, want := range []bool{true, false} {
		res, err := mw.DecideFor(t.Context(), who, "GET", "/api/%73earch?q=1", -1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Decision.Allowed != want {
			t.Errorf("request %d to /api/%%73earch: allowed %v, want %v (the search rule's 1 a minute)", i+1, res.Decision.Allowed, want)
		}
		mw.Discard(res)
	}
	res, err := mw.DecideFor(t.Context(), who, "POST", "/api%2Fgenerate", -1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cost != 2 {
		t.Errorf("POST /api%%2Fgenerate costs %d, want 2", res.Cost)
	}
	mw.Discard(res)
}

// A rule for /files/{name} limits what a Go upstream routes there:
// ServeMux reads "/files/a%2Fb" as one segment, the file "a/b", though the
// decoded path "/files/a/b" is not the rule's. A rule applies when either
// reading of the path matches it, and its key is the file ServeMux reads,
// however the client escapes it.
func TestRulesApplyUnderEitherReadingOfAnEscapedPath(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "files", Paths: []string{"/files/{name}"},
		Key: []string{"path:name"}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw,
		req{path: "/files/a%2Fb"},   // the file "a/b": its one request a minute
		req{path: "/files/a%2fb"},   // the same file
		req{path: "/files/%61%2Fb"}, // the same file
		req{path: "/files/a%2Fc"},   // another file
		req{path: "/files/a/b"},     // two segments under both readings: not the rule's
		req{path: "/files/a/b"},
	)
	if want := []int{200, 429, 429, 200, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

// ExceptPaths leave out a request only when they leave out the reading
// under which the rule's paths match it.
func TestRuleExceptPathsUnderEitherReadingOfAnEscapedPath(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/{op}"}, ExceptPaths: []string{"/api/health"},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	// "/api/health%2Fx": decoded "/api/health/x" matches neither; ServeMux
	// routes it to /api/{op} with op "health/x", which is not /api/health.
	got := statuses(mw, req{path: "/api/health%2Fx"}, req{path: "/api/health%2Fx"}, req{path: "/api/health"}, req{path: "/api/health"})
	if want := []int{200, 429, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

// ServeMux reads an escaped path by its segments (reading 2: /api/admin%2Fy
// is one segment admin/y below /api/), and that reading is read without a
// trailing slash (reading 3) and in lower case (reading 7), as rules read
// it: POST /api/admin%2Fy/ and POST /API/admin%2Fy, which Express (not
// strict, in any case) and ASP.NET Core route to the same /api/{name}
// handler with name "admin/y", pay what "POST /api/{name}" costs.
func TestAnEscapedPathsSegmentsRespelledPayTheirCost(t *testing.T) {
	costs := map[string]int64{"POST /api/{name}": 10}
	plans := []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}, Costs: costs}}
	for _, path := range []string{"/api/admin%2Fy", "/api/admin%2Fy/", "/API/admin%2Fy", "/Api/Admin%2FY"} {
		mw, _ := clockedMiddleware(t, httplimit.Options{Plans: plans})
		got := statuses(mw, req{method: "POST", path: path, remote: "192.0.2.1:1"},
			req{method: "GET", path: "/other", remote: "192.0.2.1:1"})
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("costs %v, 10 of 10: POST %s, then GET /other: %v, want %v (the POST paid less than 10)", costs, path, got, want)
		}
	}
	mw := exceptMiddleware(t, httplimit.Rule{Name: "api", Paths: []string{"/api/{name}"}, Limits: big()})
	expectRuled(t, mw, []ruledCase{
		{req{method: "POST", path: "/api/admin%2Fy/"}, true},
		{req{method: "POST", path: "/API/admin%2Fy"}, true},
	})
}
