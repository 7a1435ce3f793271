package routes

import (
	"net/http/httptest"
	"slices"
	"testing"
)

// OverlapPaths builds the paths p matches, as ServeMux routes them or
// without their trailing slash or format suffix, that
// q matches in a reading Spellings weighs: as written, without a trailing
// slash, in lower case, without a format suffix; none where a literal
// differs otherwise, or one goes on past a segment where the other ends.
func TestOverlapPathsAreOfBothPatterns(t *testing.T) {
	for _, c := range []struct {
		p, q string
		want []string
	}{
		{"/v1/tenants/acme/", "/v1/tenants/{t}/bulk", []string{"/v1/tenants/acme/bulk"}},
		{"/v1/", "/v1/bulk", []string{"/v1/bulk"}},
		{"/bulk/", "/bulk", []string{"/bulk/"}},
		{"/bulk/{$}", "/bulk", []string{"/bulk/"}},
		{"/bulk", "/bulk/", []string{"/bulk", "/bulk/"}},
		{"/bulk", "/BULK", []string{"/bulk"}},
		{"/bulk.json", "/bulk", []string{"/bulk.json"}},
		{"/v1/{id}", "/v1/{name}/", []string{"/v1/x", "/v1/x/"}},
		{"/", "/files/{path...}", []string{"/files/"}},
		{"/files/{path...}", "/files/a/{b}/c", []string{"/files/a/x/c"}},
		{"/api/caf%C3%A9", "/api/café", []string{"/api/caf%C3%A9"}},
		{"/v2/", "/v1/bulk", nil},
		{"/bulk/{x}", "/bulk", nil},
		{"/bulk", "/bulk.json", []string{"/bulk.json"}},
		{"/bulk/", "/bulk.json", nil},
		{"/v1/bulk.json/x", "/v1/bulk/x", nil},
		{"/a/{$}", "/a/{x}", nil},
	} {
		if got := OverlapPaths(c.p, c.q); !slices.Equal(got, c.want) {
			t.Errorf("OverlapPaths(%q, %q) = %q, want %q", c.p, c.q, got, c.want)
		}
		var m Mux
		if err := m.Handle(c.p); err != nil {
			t.Fatal(err)
		}
		for _, w := range OverlapPaths(c.p, c.q) {
			if u, ok := Unslashed(w); ok && !routedTo(&m, w, c.p) {
				w = u
			}
			if f, ok := Unformatted(w); ok && !routedTo(&m, w, c.p) {
				w = f
			}
			if !routedTo(&m, w, c.p) {
				t.Errorf("OverlapPaths(%q, %q): %s is not routed to %q", c.p, c.q, w, c.p)
			}
		}
	}
}

// PathWithin holds p within q only when ServeMux routes every path p
// matches to q too, q alone: literals the same in case and as unescaped,
// a wildcard holding a literal or a wildcard, a rest holding whatever
// follows.
func TestPathWithinHoldsEveryPathOfTheInnerPattern(t *testing.T) {
	for _, c := range []struct {
		p, q string
		want bool
	}{
		{"/v1/suggest", "/v1/suggest", true},
		{"/v1/suggest", "/v1/{name}", true},
		{"/v1/suggest", "/v1/", true},
		{"/v1/{id}/x", "/v1/{name}/{rest...}", true},
		{"/v1/", "/", true},
		{"/%7Eadmin", "/~admin", true},
		{"/a/{$}", "/a/", true},
		{"/", "/", true},
		{"/v1/", "/v1/suggest", false},
		{"/v1/{name}", "/v1/suggest", false},
		{"/v1/Suggest", "/v1/suggest", false},
		{"/v1/suggest", "/v1/suggest/", false},
		{"/v1/suggest/", "/v1/suggest", false},
		{"/a/{$}", "/a/{x}", false},
		{"/v1/{rest...}", "/v1/{x}", false},
	} {
		if got := PathWithin(c.p, c.q); got != c.want {
			t.Errorf("PathWithin(%q, %q) = %v, want %v", c.p, c.q, got, c.want)
		}
	}
}

// routedTo reports whether m routes the path w to the pattern p, not by
// redirecting it.
func routedTo(m *Mux, w, p string) bool {
	r := httptest.NewRequest("GET", w, nil)
	return m.Pattern(r) == p && !redirected(p, CleanPath(r.URL.Path))
}
