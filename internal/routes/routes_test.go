package routes

import (
	"net/http/httptest"
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
