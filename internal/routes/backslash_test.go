package routes

import (
	"maps"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestWithoutBackslashes(t *testing.T) {
	for in, want := range map[string]string{
		"/a": "/a", `/a\b`: "/a/b", `/a\`: "/a/", `/public/..\api\generate`: "/api/generate",
		`/a\\b`: "/a/b", `/a;x\..\b`: "/b", `/a\.`: "/a",
	} {
		if got := WithoutBackslashes(in); got != want {
			t.Errorf("WithoutBackslashes(%q) = %q, want %q", in, got, want)
		}
	}
}

// IIS (http.sys, and ASP.NET, URL Rewrite and ARR on it) reads a
// backslash, written so or as %5C, as a slash before it resolves dot
// segments: a pattern matches that reading of a path, and an exemption
// needs it to match too, with and without path parameters (as Tomcat
// with allowBackslash reads it).
func TestMuxReadsABackslashAsASlash(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST /api/generate", "GET /public/"} {
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		method, target string
		any, written   bool
	}{
		{"POST", "/api%5Cgenerate", true, false},
		{"POST", `/api\generate`, true, false},
		{"POST", "/x/..%5Capi%5Cgenerate", true, false},
		{"POST", "/API%5CGenerate", true, false},
		{"GET", "/public/a%5Cb", true, true},
		{"GET", "/public/..%5Capi%5Cgenerate", true, false},
		{"GET", "/public/x%5C..", true, false},            // /public, the subtree's root without its slash
		{"GET", "/public/x%5C..;y/..;z/api", true, false}, // /api without the parameters
		{"GET", "/public/a/..;", true, false},             // /public without the parameters
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		if got := m.MatchesAny(r); got != c.any {
			t.Errorf("%s %s: MatchesAny %v, want %v", c.method, c.target, got, c.any)
		}
		if got := m.MatchesAsWritten(r); got != c.written {
			t.Errorf("%s %s: MatchesAsWritten %v, want %v", c.method, c.target, got, c.written)
		}
	}
	seen := map[string]bool{}
	for p := range m.Spellings(httptest.NewRequest("POST", "/public/..%5Capi%5Cgenerate", nil)) {
		seen[p] = true
	}
	if got, want := slices.Sorted(maps.Keys(seen)), []string{"", "POST /api/generate"}; !slices.Equal(got, want) {
		t.Errorf("POST /public/..%%5Capi%%5Cgenerate: Spellings yielded %q, want %q", got, want)
	}
}
