package routes

import "testing"

// Outranks judges two patterns as a ServeMux holding them routes a request
// both match: a host before none, the more specific before the more
// general, and, where neither is more specific, the first; where no
// request matches both, the second keeps its own. Paths' literals are
// compared in lower case and unescaped, as Spellings reads a path in lower
// case, and hosts in lower case.
func TestOutranksJudgesTwoPatternsAsServeMuxRanksThem(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"/api/pay/", "/api/", true},
		{"/api/", "/api/pay/", false},
		{"/api/pay/", "POST /api/pay/bulk", false},
		{"GET /api/health", "/api/", true},
		{"GET /api/", "/api/health", true}, // neither is more specific
		{"/api/health", "GET /api/", true},
		{"POST /jobs/", "POST /jobs/run", false},
		{"POST /jobs/", "/jobs/run", true}, // neither
		{"/jobs/run/", "POST /jobs/run", false},
		{"POST /api/pay", "POST /api/pay", true},
		{"GET /files/{name}", "GET /files/report", false},
		{"/API/Pay/", "/api/", true},
		{"/api/p%61y/", "/api/", true},
		{"POST /jobs/", "GET /jobs/run", false},
		{"POST API.example.com./api/pay", "/api/", true},
		{"/api/", "POST api.example.com/api/pay", false},
		{"a.example.com/api/", "b.example.com/api/", false},
		{"/", "/{rest...}", true},
	} {
		if got := Outranks(c.a, c.b); got != c.want {
			t.Errorf("Outranks(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
