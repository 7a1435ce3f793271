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
// refuses side by side in lower case, which are not one route, the same
// one is matched in lower case in either order.
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
		{[]string{"GET /A/{x}/c", "GET /a/b/{z}"}, "GET", "/A/B/C", []string{"", "GET /A/{x}/c"}},
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
