package httplimit

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/sluice-dev/sluice/internal/routes"
)

// serveMuxMatch asks net/http's ServeMux, with pattern alone registered,
// whether it routes a request for u to it, and the value of each wildcard.
func serveMuxMatch(t *testing.T, pattern string, u *url.URL, wilds []string) (bool, map[string]string, bool) {
	mux := http.NewServeMux()
	var got map[string]string
	ok := true
	func() {
		defer func() {
			if recover() != nil {
				ok = false
			}
		}()
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			got = map[string]string{}
			for _, w := range wilds {
				got[w] = r.PathValue(w)
			}
		})
	}()
	if !ok {
		return false, nil, false
	}
	r := &http.Request{Method: "GET", URL: u, Host: "example.com", Header: http.Header{}}
	mux.ServeHTTP(httptest.NewRecorder(), r)
	return got != nil, got, true
}

func wildcardsOf(pp *pathPattern) []string {
	var out []string
	for _, s := range pp.segs {
		if s.wild != "" {
			out = append(out, s.wild)
		}
	}
	return out
}

// agreeWithServeMux fails t when pattern and path are matched otherwise
// than net/http's ServeMux routes them, or a wildcard's value differs from
// ServeMux's with its segment parameters dropped (";jsessionid=…", which
// Java upstreams route without: a key is the resource, however spelled).
func agreeWithServeMux(t *testing.T, pattern, path string) {
	pp, err := parsePathPattern(pattern)
	want, values, muxOK := serveMuxMatch(t, pattern, &url.URL{Path: path}, wildcardsOf(&pp))
	if err != nil {
		return // ServeMux accepts a few more (literal braces): rules are stricter
	}
	if !muxOK {
		t.Fatalf("pattern %q: accepted by parsePathPattern, refused by ServeMux", pattern)
	}
	var m pathMatch
	got := pp.match(path, false, &m)
	if got != want {
		t.Fatalf("pattern %q, path %q: match %v, ServeMux %v", pattern, path, got, want)
	}
	if !got {
		return
	}
	for _, w := range wildcardsOf(&pp) {
		if v := m.value(pp.wildIndex(w)); v != wildcardWithoutParams(values[w]) {
			t.Fatalf("pattern %q, path %q: {%s} = %q, ServeMux %q (without parameters %q)", pattern, path, w, v, values[w],
				wildcardWithoutParams(values[w]))
		}
	}
}

func TestPathPatternsMatchAsServeMuxRoutes(t *testing.T) {
	cases := []struct{ pattern, path string }{
		{"/", "/"}, {"/", "/a/b"}, {"/a", "/a"}, {"/a", "/a/"}, {"/a", "/ab"}, {"/a/", "/a/"}, {"/a/", "/a/b/c"},
		{"/a/{x}", "/a/b"}, {"/a/{x}", "/a/"}, {"/a/{x}", "/a/b/c"}, {"/a/{x}/c", "/a/b/c"}, {"/a/{x}/c", "/a//c"},
		{"/a/{x...}", "/a/"}, {"/a/{x...}", "/a/b/c"}, {"/a/{x...}", "/a"}, {"/a/{$}", "/a/"}, {"/a/{$}", "/a/b"},
		{"/{$}", "/"}, {"/{$}", "/x"}, {"/t/{tenant}/uploads/", "/t/acme/uploads/f"}, {"/{a}/{b}", "/x/y"},
		{"/a%41", "/aA"}, {"/a%41", "/a%41"}, {"/a%2Fb", "/a/b"}, {"/a%zz", "/a%zz"},
	}
	for _, c := range cases {
		agreeWithServeMux(t, c.pattern, c.path)
	}
}

// FuzzRulePathMatch: a rule's path pattern matches the cleaned paths that
// net/http's ServeMux routes to it, and no others, with the same wildcard
// values.
func FuzzRulePathMatch(f *testing.F) {
	for _, s := range [][2]string{{"/a/{x}/c", "/a/b/c"}, {"/a/{x...}", "/a/b/c"}, {"/a/{$}", "/a/"}, {"/a/", "/a/b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		agreeWithServeMux(t, pattern, routes.CleanPath(path))
	})
}

// agreeWithServeMuxEscaped fails t when pattern and a request for the
// escaped path esc are matched otherwise than net/http's ServeMux routes
// them (by esc's escaped segments, each unescaped), or a wildcard differs.
func agreeWithServeMuxEscaped(t *testing.T, pattern, esc string) {
	esc = routes.CleanPath(esc) // ServeMux redirects an unclean path to its cleaned form
	dec, err := url.PathUnescape(esc)
	if err != nil {
		return // not a path a request can have
	}
	pp, err := parsePathPattern(pattern)
	if err != nil {
		return // ServeMux accepts a few more (literal braces): rules are stricter
	}
	u := &url.URL{Path: dec, RawPath: esc}
	want, values, muxOK := serveMuxMatch(t, pattern, u, wildcardsOf(&pp))
	if !muxOK {
		t.Fatalf("pattern %q: accepted by parsePathPattern, refused by ServeMux", pattern)
	}
	// As matchRules reads it: the escaped path ServeMux reads, RawPath
	// only when it is a valid escaping of Path.
	if esc = u.EscapedPath(); routes.CleanPath(esc) != esc {
		return // ServeMux redirects it; a request URI parses to no such URL
	}
	var m pathMatch
	got := pp.match(esc, true, &m)
	if got != want {
		t.Fatalf("pattern %q, escaped path %q: match %v, ServeMux %v", pattern, esc, got, want)
	}
	if !got {
		return
	}
	for _, w := range wildcardsOf(&pp) {
		if v := m.value(pp.wildIndex(w)); v != wildcardWithoutParams(values[w]) {
			t.Fatalf("pattern %q, escaped path %q: {%s} = %q, ServeMux %q (without parameters %q)", pattern, esc, w, v, values[w],
				wildcardWithoutParams(values[w]))
		}
	}
}

func TestPathPatternsMatchEscapedPathsAsServeMuxRoutes(t *testing.T) {
	cases := []struct{ pattern, path string }{
		{"/files/{name}", "/files/a%2Fb"}, {"/files/{name}", "/files/%61"}, {"/files/{name}/x", "/files/a%2Fb/x"},
		{"/files/a", "/files/%61"}, {"/files/a/b", "/files/a%2Fb"}, {"/files/{p...}", "/files/a%2Fb/c%20d"},
		{"/files/", "/files%2Fa"}, {"/a%2Fb", "/a%2Fb"}, {"/a%2Fb", "/a%2fb"}, {"/%61", "/%61"}, {"/files/{$}", "/files/%2F"}, {"/files/{$}", "/files/%2F/x"}, {"/files/{name}", "/files/%2F"}, {"/files/{name}/x", "/files/%2f/x"},
		{"/{a}/{b}", "/x%2Fy"}, {"/a/{x}", "/a/%2E%2E"},
	}
	for _, c := range cases {
		agreeWithServeMuxEscaped(t, c.pattern, c.path)
	}
}

// FuzzRulePathMatchEscaped: a rule's path pattern matches the escaped paths
// that net/http's ServeMux routes to it, and no others, with the same
// wildcard values.
func FuzzRulePathMatchEscaped(f *testing.F) {
	for _, s := range [][2]string{{"/a/{x}/c", "/a/b%2Fd/c"}, {"/a/{x...}", "/a/b%2F/c"}, {"/a/{$}", "/a/"}, {"/a/", "/a%2Fb"}, {"/a/b", "/%61/b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(agreeWithServeMuxEscaped)
}
