package routes

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Two patterns, one writing a literal segment escaped and the other
// unescaped, overlap: ServeMux unescapes a pattern's literal segments,
// so both match the same requests (config refused such an except_paths
// at load as one that "leaves out nothing").
func TestAnEscapedLiteralOverlapsItsUnescapedSpelling(t *testing.T) {
	for _, c := range [][2]string{
		{"/api/caf%C3%A9/", "/api/café/internal"},
		{"/%7Eadmin/", "/~admin/stats"},
	} {
		p, q := c[0], c[1]
		var m Mux
		if err := m.Handle(p); err != nil {
			t.Fatal(err)
		}
		var n Mux
		if err := n.Handle(q); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, q, nil)
		if m.Pattern(r) == "" || n.Pattern(r) == "" {
			t.Fatalf("%s: the probe's path matches not both patterns", q)
		}
		if !PathsOverlap(p, q) {
			t.Errorf("PathsOverlap(%q, %q) = false; both match the path %s", p, q, q)
		}
	}
}
