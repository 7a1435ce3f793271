package httplimit

import (
	"net/http"
	"net/url"
	"testing"
)

// TestARuleTakesTheMostSpecificOfItsPatternsAsServeMuxDoes: of a rule's
// patterns that match a path, the one its "route" key and its wildcards
// are taken from is the one ServeMux routes the path to, the most
// specific, whatever their order: with "/v1/" and "/v1/uploads",
// /v1/uploads is the route /v1/uploads, not /v1/.
func TestARuleTakesTheMostSpecificOfItsPatternsAsServeMuxDoes(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		paths    []string
	}{
		{[]string{"/v1/", "/v1/uploads"}, []string{"/v1/uploads", "/v1/other", "/v1/", "/v1/uploads/x"}},
		{[]string{"/v1/{rest...}", "/v1/files/{name}", "/v1/files/{name}/raw"}, []string{"/v1/files/a", "/v1/files/a/raw", "/v1/files/a/b", "/v1/x"}},
		{[]string{"/t/{id}/", "/t/{id}/{$}", "/t/{id}/x"}, []string{"/t/a/", "/t/a/b", "/t/a/x", "/t/a/x/y"}},
		{[]string{"/{a}/{b}", "/x/{b}", "/x/y"}, []string{"/x/y", "/x/z", "/w/y"}},
	} {
		for _, order := range [][]string{c.patterns, reversed(c.patterns)} {
			mux := http.NewServeMux()
			ru := &alt{}
			for _, s := range order {
				mux.Handle(s, http.NotFoundHandler())
				pp, err := parsePathPattern(s)
				if err != nil {
					t.Fatal(err)
				}
				ru.paths = append(ru.paths, pp)
			}
			for _, p := range c.paths {
				_, want := mux.Handler(&http.Request{Method: "GET", Host: "example.com", URL: &url.URL{Path: p}})
				var m pathMatch
				i, ok := ru.matchesPath(p, false, &m)
				if got := ""; ok {
					got = order[i]
					if got != want {
						t.Errorf("patterns %q, path %q: %q, ServeMux %q", order, p, got, want)
					}
				} else if want != "" {
					t.Errorf("patterns %q, path %q: no match, ServeMux %q", order, p, want)
				}
			}
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
