package routes

import (
	"maps"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestMuxMatchesHostsInAnyCase(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST API.example.com./v1/generate", "POST api.example.com/v1/generate", "GET /items/{id}"} {
		if err := m.Handle(p); err != nil {
			t.Fatalf("Handle(%q): %v", p, err)
		}
	}
	for _, c := range []struct{ method, target, want string }{
		{"POST", "http://api.example.com/v1/generate", "POST API.example.com./v1/generate"},
		{"POST", "http://Api.Example.COM./v1/generate", "POST API.example.com./v1/generate"},
		{"POST", "http://api.example.com:8443/v1/generate", "POST API.example.com./v1/generate"},
		{"POST", "http://other.example.com/v1/generate", ""},
		{"GET", "http://x/items/7", "GET /items/{id}"},
		{"DELETE", "http://x/items/7", ""},
	} {
		if got := m.Pattern(httptest.NewRequest(c.method, c.target, nil)); got != c.want {
			t.Errorf("%s %s: pattern %q, want %q", c.method, c.target, got, c.want)
		}
	}
	if err := m.Handle("GET /items/{name}"); err == nil {
		t.Error("a pattern that conflicts with one added before was accepted")
	}
	var zero Mux
	if zero.Pattern(httptest.NewRequest("GET", "/", nil)) != "" || zero.MatchesAny(httptest.NewRequest("GET", "/", nil)) {
		t.Error("the zero Mux matched a request")
	}
	var none *Mux
	if none.MatchesAll(httptest.NewRequest("GET", "/", nil)) {
		t.Error("a nil Mux matched a request")
	}
}

// An escaped slash is one segment to ServeMux and a separator to an
// upstream that decodes: MatchesAll needs both readings, MatchesAny
// either.
func TestMuxReadingsOfAnEscapedPath(t *testing.T) {
	var m Mux
	if err := m.Handle("POST /api/generate"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target   string
		all, any bool
	}{
		{"/api/generate", true, true},
		{"/api%2Fgenerate", false, true},
		{"/api/other", false, false},
	} {
		r := httptest.NewRequest("POST", c.target, nil)
		if got := m.MatchesAll(r); got != c.all {
			t.Errorf("%s: MatchesAll %v, want %v", c.target, got, c.all)
		}
		if got := m.MatchesAny(r); got != c.any {
			t.Errorf("%s: MatchesAny %v, want %v", c.target, got, c.any)
		}
	}
}

// "/" handed to Handle is a pattern like any other: it matches what no
// other pattern does, where a Mux without it matches nothing there.
func TestMuxRootIsMatchedOnlyWhenHandled(t *testing.T) {
	var without, with Mux
	for _, p := range []string{"GET /items/"} {
		without.Handle(p)
		with.Handle(p)
	}
	if err := with.Handle("/"); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/other", nil)
	if got := without.Pattern(r); got != "" {
		t.Errorf("without \"/\": pattern %q, want none", got)
	}
	if got := with.Pattern(r); got != "/" {
		t.Errorf("with \"/\": pattern %q, want \"/\"", got)
	}
	if got := with.Pattern(httptest.NewRequest("GET", "/items/7", nil)); got != "GET /items/" {
		t.Errorf("with \"/\": GET /items/7 matched %q", got)
	}
}

// "/{name...}" matches every request, as "/" does (one route by Normal):
// a Mux takes it as it takes "/", matching whatever no other pattern does,
// in any case, and refuses it beside "/", naming both as written; with a
// method or a host it is a pattern like any other.
func TestMuxTakesTheRestWildcardAtTheRootAsTheRoot(t *testing.T) {
	var m Mux
	for _, p := range []string{"GET /Items/", "/{p...}"} {
		if err := m.Handle(p); err != nil {
			t.Fatalf("Handle(%q): %v", p, err)
		}
	}
	for _, c := range []struct{ method, target, want string }{
		{"POST", "/any/path", "/{p...}"},
		{"GET", "/", "/{p...}"},
		{"GET", "/Items/7", "GET /Items/"},
	} {
		if got := m.Pattern(httptest.NewRequest(c.method, c.target, nil)); got != c.want {
			t.Errorf("%s %s: pattern %q, want %q", c.method, c.target, got, c.want)
		}
	}
	seen := map[string]bool{}
	for p := range m.Spellings(httptest.NewRequest("POST", "/OTHER", nil)) {
		seen[p] = true
	}
	if !seen["/{p...}"] || seen[""] {
		t.Errorf("Spellings(POST /OTHER) yielded %v, want only %q", slices.Collect(maps.Keys(seen)), "/{p...}")
	}
	if got := m.Covering("POST /x/{id}"); got != "/{p...}" {
		t.Errorf("Covering(%q) = %q, want %q", "POST /x/{id}", got, "/{p...}")
	}
	for _, second := range []string{"/", "/{rest...}"} {
		err := m.Handle(second)
		if err == nil || !strings.Contains(err.Error(), `"/{p...}"`) || !strings.Contains(err.Error(), strconv.Quote(second)) {
			t.Errorf("Handle(%q) beside %q: %v, want an error naming both", second, "/{p...}", err)
		}
	}
	var root Mux
	for _, p := range []string{"/", "GET /{p...}", "example.com/{p...}"} { // with a method or host, not every request
		if err := root.Handle(p); err != nil {
			t.Errorf("Handle(%q) beside \"/\": %v", p, err)
		}
	}
}
