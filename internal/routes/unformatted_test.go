package routes

import (
	"net/http/httptest"
	"testing"
)

// Unformatted drops the format suffix Rails routes a path with: a dot and
// ASCII letters or digits ending the last segment, after a name that does
// not end in a dot.
func TestUnformattedDropsARailsFormatSuffix(t *testing.T) {
	for _, c := range []struct {
		p, want string
		ok      bool
	}{
		{"/v1/login.json", "/v1/login", true},
		{"/v1/login.XML", "/v1/login", true},
		{"/v1/report.v2", "/v1/report", true},
		{"/a.b/c.mp4", "/a.b/c", true},
		{"/v1/login.tar.gz", "/v1/login.tar", true},
		{"/v1/login", "", false},
		{"/v1/login.", "", false},
		{"/v1/.json", "", false},
		{"/v1/login..json", "", false},
		{"/v1/login.js-on", "", false},
		{"/v1/login.json/", "", false},
		{"/v1.json/login", "", false},
		{"/", "", false},
	} {
		if got, ok := Unformatted(c.p); got != c.want || ok != c.ok {
			t.Errorf("Unformatted(%q) = %q, %v, want %q, %v", c.p, got, ok, c.want, c.ok)
		}
	}
}

// MatchesAny counts a path with a format suffix as the pattern without it
// that the suffix steps off, in any case; not a pattern that the path with
// its suffix matches otherwise, nor none.
func TestMuxMatchesAnyFormatSuffix(t *testing.T) {
	var m Mux
	for _, p := range []string{"POST /api/generate", "GET /Reports/{id}/pdf"} {
		if err := m.Handle(p); err != nil {
			t.Fatalf("Handle(%q): %v", p, err)
		}
	}
	for _, c := range []struct {
		method, target string
		want           bool
	}{
		{"POST", "/api/generate.json", true},
		{"POST", "/api/generate.json/", true},
		{"POST", "/API/Generate.JSON", true},
		{"POST", "/api/generate.json;x=1", true},
		{"GET", "/reports/7/pdf.pdf", true},
		{"POST", "/api/generate.tar.gz", false},
		{"POST", "/api/generate.", false},
		{"POST", "/api/generate.json/x", false},
		{"GET", "/api/generate.json", false},
	} {
		if got := m.MatchesAny(httptest.NewRequest(c.method, c.target, nil)); got != c.want {
			t.Errorf("%s %s: MatchesAny %v, want %v", c.method, c.target, got, c.want)
		}
	}
}
