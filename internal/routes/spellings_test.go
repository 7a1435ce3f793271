package routes

import (
	"maps"
	"net/http/httptest"
	"slices"
	"testing"
)

// MatchesAny counts every spelling that upstreams serve as a pattern's
// request: a method in any case, a trailing slash, path parameters, the
// path in any case (against patterns whose paths have upper-case letters
// too), and an escaped path's decoded reading.
func TestMuxMatchesAnySpelling(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST /api/generate", "GET /Reports/{id}", "PUT api.example.com/v1/Bulk/{$}"} {
		if err := m.Handle(p); err != nil {
			t.Fatalf("Handle(%q): %v", p, err)
		}
	}
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/api/generate", true},
		{"post", "/api/generate", true},
		{"POST", "/api/generate/", true},
		{"POST", "/api/generate;x=1", true},
		{"POST", "/api/generate;x=1/", true},
		{"POST", "/x/..;/api/generate", true},
		{"POST", "/API/Generate", true},
		{"POST", "/Api/Generate;v=2/", true},
		{"POST", "/api%2Fgenerate", true},
		{"GET", "/reports/7", true},
		{"GET", "/REPORTS/7/", true},
		{"head", "/Reports/7", true},
		{"PUT", "http://API.example.com/V1/BULK/", true},
		{"PUT", "http://api.example.com/v1/bulk", true},
		{"POST", "/api/generated", false},
		{"POST", "/api/generate/x", false},
		{"GET", "/api/generate", false},
		{"PUT", "http://other.example.com/v1/bulk/", false},
		{"GET", "/other", false},
	} {
		if got := m.MatchesAny(httptest.NewRequest(c.method, c.target, nil)); got != c.want {
			t.Errorf("%s %s: MatchesAny %v, want %v", c.method, c.target, got, c.want)
		}
	}
}

// Patterns that are one route once in lower case are each matched in their
// own case and in lower case; "/" handed to Handle matches every spelling.
func TestMuxPatternsThatMeetInLowerCase(t *testing.T) {
	var m Mux
	for _, p := range []string{"GET /a/{x}", "GET /A/{y}"} {
		if err := m.Handle(p); err != nil {
			t.Fatalf("Handle(%q): %v", p, err)
		}
	}
	for _, target := range []string{"/a/1", "/A/1", "/a/1/"} {
		if !m.MatchesAny(httptest.NewRequest("GET", target, nil)) {
			t.Errorf("GET %s: not matched", target)
		}
	}
	var root Mux
	root.Handle("/Static/")
	root.Handle("/")
	if !root.MatchesAny(httptest.NewRequest("POST", "/ANYTHING/", nil)) {
		t.Error(`"/" handed to Handle: POST /ANYTHING/ not matched`)
	}
	var none Mux
	none.Handle("/Static/")
	if none.MatchesAny(httptest.NewRequest("GET", "/other", nil)) {
		t.Error("GET /other matched /Static/")
	}
	if !none.MatchesAny(httptest.NewRequest("GET", "/static/x", nil)) {
		t.Error("GET /static/x: not matched by /Static/")
	}
}

func TestWithoutParamsAndUnslashed(t *testing.T) {
	for in, want := range map[string]string{"/a": "/a", "/a;x": "/a", "/a;x/b;y=1/": "/a/b/", "/x/..;/a": "/a", "/;/": "/"} {
		if got := WithoutParams(in); got != want {
			t.Errorf("WithoutParams(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"/": "", "/a": "", "/a/": "/a", "/a/b/": "/a/b"} {
		if got, ok := Unslashed(in); got != want || ok != (want != "") {
			t.Errorf("Unslashed(%q) = %q, %v, want %q", in, got, ok, want)
		}
	}
}

// MatchesAsWritten needs the path as written under every reading that may
// route it elsewhere: ServeMux's, the decoded one, and the one without
// path parameters, where "..;" is a dot segment.
func TestMuxMatchesAsWritten(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST /api/pay/", "GET /health", "GET /static/{$}", "GET files.example.com/f/{rest...}"} {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/api/pay/card", true},
		{"POST", "/api/pay/", true},
		{"GET", "/static/", true},
		{"GET", "http://files.example.com/f/", true},
		// ServeMux redirects a subtree's root without its slash to it, and
		// reports the subtree's pattern: the path is not the pattern's.
		{"POST", "/api/pay", false},
		{"GET", "/static", false},
		{"GET", "http://files.example.com/f", false},
		{"POST", "/api/pay/card;v=1", true},
		{"GET", "/health", true},
		{"HEAD", "/health", true},
		{"POST", "/api/pay/..;/orders", false},
		{"POST", "/api/pay/..;/", false},
		{"POST", "/api/pay/card%2F..%2F..%2Forders", false},
		{"POST", "/API/pay/card", false},
		{"post", "/api/pay/card", false},
		{"GET", "/health/", false},
		{"GET", "/health;x", false},
	} {
		if got := m.MatchesAsWritten(httptest.NewRequest(c.method, c.target, nil)); got != c.want {
			t.Errorf("%s %s: MatchesAsWritten %v, want %v", c.method, c.target, got, c.want)
		}
	}
}

// Spellings yields every pattern a spelling matches as configured — of
// patterns that differ only in case, each — and "" for a spelling that
// matches none.
func TestMuxSpellingsYieldsEveryPatternAsConfigured(t *testing.T) {
	var m Mux
	for _, p := range []string{"GET /Items/{id}", "GET /items/{id}", "GET API.example.com/Bulk", "/"} {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		target string
		want   []string
	}{
		{"/ITEMS/1", []string{"/", "GET /Items/{id}", "GET /items/{id}"}},
		{"/items/1/", []string{"/", "GET /Items/{id}", "GET /items/{id}"}},
		{"http://api.example.com/bulk", []string{"/", "GET API.example.com/Bulk"}},
		{"/other", []string{"/"}},
	} {
		seen := map[string]bool{}
		for p := range m.Spellings(httptest.NewRequest("GET", c.target, nil)) {
			seen[p] = true
		}
		got := slices.Sorted(maps.Keys(seen))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Spellings yielded %q, want %q", c.target, got, c.want)
		}
	}
	var none Mux
	for p := range none.Spellings(httptest.NewRequest("GET", "/", nil)) {
		t.Errorf("the zero Mux yielded %q", p)
	}
}

// A path in another case yields each pattern whose path in lower case is
// the route it matches, however the patterns write it (a wildcard renamed,
// a subtree as {name...}, a literal escaped: one route by Normal), and in
// whichever order they were handed to Handle. Of patterns that ServeMux
// refuses side by side in lower case, which are not one route, each that
// the path matches is yielded, in either order: "GET /a/b/{z}" matches
// /a/b/c as written, as /A/B/C is read in lower case.
func TestMuxSpellingsInLowerCaseYieldEverySpellingOfTheRoute(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		method   string
		path     string
		want     []string
	}{
		{[]string{"POST /items/{key}", "POST /Items/{id}"}, "POST", "/ITEMS/7", []string{"", "POST /Items/{id}", "POST /items/{key}"}},
		{[]string{"POST /bulk/{rest...}", "POST /Bulk/"}, "POST", "/BULK/x", []string{"", "POST /Bulk/", "POST /bulk/{rest...}"}},
		{[]string{"GET /ab", "GET /A%62"}, "GET", "/AB", []string{"", "GET /A%62", "GET /ab"}},
		{[]string{"GET /A/{x}/c", "GET /a/b/{z}"}, "GET", "/A/B/C", []string{"", "GET /A/{x}/c", "GET /a/b/{z}"}},
		{[]string{"GET /A/{x}/c", "GET /a/B/{z}"}, "GET", "/a/b/c", []string{"", "GET /A/{x}/c", "GET /a/B/{z}"}},
		// A path its route matches as written is no other route's in
		// lower case: its cost, 0 for a free gRPC method, is the only one.
		{[]string{"POST /svc.Echo/Heavy", "POST /svc.Echo/Say"}, "POST", "/svc.Echo/Heavy", []string{"POST /svc.Echo/Heavy"}},
	} {
		for _, order := range [][]string{c.patterns, {c.patterns[1], c.patterns[0]}} {
			var m Mux
			for _, p := range order {
				if err := m.Handle(p); err != nil {
					t.Fatalf("Handle(%q): %v", p, err)
				}
			}
			seen := map[string]bool{}
			for p := range m.Spellings(httptest.NewRequest(c.method, c.path, nil)) {
				seen[p] = true
			}
			if got := slices.Sorted(maps.Keys(seen)); !slices.Equal(got, c.want) {
				t.Errorf("%q handed in this order: Spellings(%s %s) yielded %q, want %q", order, c.method, c.path, got, c.want)
			}
		}
	}
}

// A path in lower case yields, of the patterns in lower case, those that
// ServeMux would route it to, were they in one: where some clash (neither
// "POST /api/{version}/bulk" nor "POST /api/v2/{op}" is more specific),
// each that the path matches, and not a pattern that one of them is more
// specific than ("POST /api/{a}/{b}") or that names no host beside one
// that does, whatever the order the patterns were handed to Handle in.
func TestMuxSpellingsInLowerCaseYieldNoPatternAMoreSpecificOneTakesThePathFrom(t *testing.T) {
	patterns := []string{"POST /API/{version}/bulk", "POST /Api/v2/{op}", "POST /Api/{a}/{b}", "POST api.example.com/API/{v}/{w}"}
	for _, c := range []struct {
		target string
		want   []string
	}{
		{"/aPi/v2/bulk", []string{"", "POST /API/{version}/bulk", "POST /Api/v2/{op}"}},
		{"/aPi/v2/x", []string{"", "POST /Api/v2/{op}"}},
		{"/aPi/v1/x", []string{"", "POST /Api/{a}/{b}"}},
		{"http://api.example.com/aPi/v2/x", []string{"", "POST api.example.com/API/{v}/{w}"}},
	} {
		for rotation := range patterns {
			order := append(slices.Clone(patterns[rotation:]), patterns[:rotation]...)
			var m Mux
			for _, p := range order {
				if err := m.Handle(p); err != nil {
					t.Fatalf("Handle(%q): %v", p, err)
				}
			}
			seen := map[string]bool{}
			for p := range m.Spellings(httptest.NewRequest("POST", c.target, nil)) {
				seen[p] = true
			}
			if got := slices.Sorted(maps.Keys(seen)); !slices.Equal(got, c.want) {
				t.Errorf("%q handed in this order: Spellings(POST %s) yielded %q, want %q", order, c.target, got, c.want)
			}
		}
	}
}

// A pattern's wildcards may be named alike but for case ({A} and {a}:
// ServeMux and CheckPath take them as two names). Only its literals are
// lowered for the spellings in lower case: its wildcards' names are no
// part of what a path matches (Normal drops them), and lowered they would
// be one name, which ServeMux refuses ("/bulk/{a}/{a}").
func TestMuxMatchesAPathInAnotherCaseUnderWildcardsNamedAlikeButForCase(t *testing.T) {
	for _, c := range []struct{ pattern, path string }{
		{"POST /bulk/{A}/{a}", "/BULK/x/y"},
		{"POST /Bulk/{Id}/{id}", "/bulk/x/y"},
		{"POST /bulk/{x}/{y}", "/BULK/x/y"}, // the same route, other names
	} {
		var m Mux
		if err := m.Handle(c.pattern); err != nil {
			t.Fatal(err)
		}
		if !m.MatchesAny(httptest.NewRequest("POST", c.path, nil)) {
			t.Errorf("%q: POST %s matches no pattern under any spelling; want it matched in lower case", c.pattern, c.path)
		}
	}
}

// A request spelled as its literal pattern is written is read without an
// allocation beside patterns that clash in lower case (in ServeMuxes of
// their own), as beside patterns in one. (ServeMux allocates for a
// wildcard's value, so a path that a wildcard pattern matches does.)
func TestMuxSpellingsOfALiteralPathAllocateNothingBesidePatternsClashingInLowerCase(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST /bulk", "POST /API/{version}/bulk", "POST /Api/v2/{op}"} {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.lower) < 2 {
		t.Fatalf("%d ServeMuxes in lower case, want 2 or more", len(m.lower))
	}
	r := httptest.NewRequest("POST", "/bulk", nil)
	spell := func() {
		for range m.Spellings(r) {
		}
	}
	if n := testing.AllocsPerRun(100, spell); n != 0 {
		t.Errorf("POST /bulk: %.0f allocations, want 0", n)
	}
}

// A path read in lower case yields the pattern ServeMux routes it to among
// the patterns in lower case, not a less specific one that the lowered
// path matches as written: /api/health is "GET /api/Health"'s in lower
// case, not "GET /api/"'s, and a gRPC method (full methods are
// case-sensitive) spelled as its pattern is that pattern's alone beside
// "/{service}/{method}" or "/". So without a format suffix:
// /v1/jobs/status is "GET /v1/Jobs/status"'s, not "GET /v1/{x}/status"'s.
func TestMuxSpellingsInLowerCaseYieldNoLessSpecificPatternAsWritten(t *testing.T) {
	for _, c := range []struct {
		patterns       []string
		method, target string
		want           []string
	}{
		{[]string{"GET /api/Health", "GET /api/"}, "GET", "/api/Health", []string{"GET /api/Health"}},
		{[]string{"POST /svc.Echo/Heavy", "/{service}/{method}"}, "POST", "/svc.Echo/Heavy", []string{"POST /svc.Echo/Heavy"}},
		{[]string{"POST /svc.Echo/Heavy", "/"}, "POST", "/svc.Echo/Heavy", []string{"POST /svc.Echo/Heavy"}},
		{[]string{"GET /v1/Jobs/status", "GET /v1/{x}/status", "/"}, "GET", "/v1/Jobs/status.json", []string{"/", "GET /v1/Jobs/status"}},
	} {
		var m Mux
		for _, p := range c.patterns {
			if err := m.Handle(p); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		for p := range m.Spellings(httptest.NewRequest(c.method, c.target, nil)) {
			seen[p] = true
		}
		if got := slices.Sorted(maps.Keys(seen)); !slices.Equal(got, c.want) {
			t.Errorf("%q: Spellings(%s %s) yielded %q, want %q", c.patterns, c.method, c.target, got, c.want)
		}
	}
}

// ServeMux reads an escaped path by its segments ("/api/admin%2Fy" is one
// segment admin/y below /api/), and that reading is respelled as the
// decoded one is: without a trailing slash, and in lower case, which
// Express (not strict, in any case) and ASP.NET Core route to the same
// /api/{name} handler with name "admin/y".
func TestMuxMatchesAnyRespellingOfAnEscapedPathsSegments(t *testing.T) {
	for _, pats := range [][]string{{"POST /api/{name}"}, {"POST /api/{name}", "POST /Other"}} {
		var m Mux
		for _, p := range pats {
			if err := m.Handle(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, target := range []string{"/api/admin%2Fy", "/api/admin%2Fy/", "/API/admin%2Fy", "/Api/Admin%2FY/"} {
			if !m.MatchesAny(httptest.NewRequest("POST", target, nil)) {
				t.Errorf("patterns %q: POST %s not matched under any spelling", pats, target)
			}
		}
	}
}

// ServeMux unescapes a pattern's literal segments ("/%41pi/bulk" is the
// route /Api/bulk), and a path in lower case is read against them so
// unescaped and lowered: /api/bulk and /API/bulk are that route's, as
// /caf%C3%A9/bulk (café) is "/caf%C3%89/bulk"'s (cafÉ).
func TestMuxSpellingsInLowerCaseReadAPatternsEscapedLetters(t *testing.T) {
	for _, pats := range [][]string{{"POST /%41pi/bulk"}, {"POST /%41pi/bulk", "POST /Other"}, {"POST /caf%C3%89/bulk"}} {
		var m Mux
		for _, p := range pats {
			if err := m.Handle(p); err != nil {
				t.Fatal(err)
			}
		}
		targets := []string{"/api/bulk", "/API/bulk"}
		if pats[0] == "POST /caf%C3%89/bulk" {
			targets = []string{"/caf%C3%A9/bulk", "/CAF%C3%A9/bulk"}
		}
		for _, target := range targets {
			if !slices.Contains(slices.Collect(m.Spellings(httptest.NewRequest("POST", target, nil))), pats[0]) {
				t.Errorf("patterns %q: POST %s does not yield %q (its route in another case)", pats, target, pats[0])
			}
		}
	}
}

// A ServeMux of m.lower after the first is read only for a path that has,
// at the index of some pattern's first literal segment, that literal: its
// catch-all allocates. A clashing pattern starting with a wildcard ("GET
// /{tenant}/Items/count" beside "GET /acme/items/{id}", disjoint as
// written, overlapping in lower case) is read by its "items" second, so a
// literal path allocates nothing beside it, and a path it matches still
// yields it.
func TestMuxSpellingsOfALiteralPathAllocateNothingBesideAClashingPatternStartingWithAWildcard(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST /bulk", "GET /acme/items/{id}", "GET /{tenant}/Items/count"} {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.lower) < 2 {
		t.Fatalf("%d ServeMuxes in lower case, want 2 or more", len(m.lower))
	}
	r := httptest.NewRequest("POST", "/bulk", nil)
	spell := func() {
		for range m.Spellings(r) {
		}
	}
	if n := testing.AllocsPerRun(100, spell); n != 0 {
		t.Errorf("POST /bulk: %.0f allocations, want 0", n)
	}
	for target, want := range map[string][]string{
		"/x/ITEMS/count":    {"", "GET /{tenant}/Items/count"},
		"/ACME/items/count": {"", "GET /acme/items/{id}", "GET /{tenant}/Items/count"},
	} {
		seen := map[string]bool{}
		for p := range m.Spellings(httptest.NewRequest("GET", target, nil)) {
			seen[p] = true
		}
		if got := slices.Sorted(maps.Keys(seen)); !slices.Equal(got, want) {
			t.Errorf("Spellings(GET %s) yielded %q, want %q", target, got, want)
		}
	}
}
