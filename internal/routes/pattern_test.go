package routes

import (
	"net/http"
	"testing"
)

// Two patterns have one normal form exactly when they match the same
// requests as a Mux matches them (hosts in any case), and then a ServeMux
// holding one refuses the other, hosts in lower case: a wildcard renamed,
// a literal escaped, a host in another case or a subtree written as
// {name...} is one route; a wildcard against a literal, a subtree against
// {$}, another method or any method is another.
func TestNormalIsOneForPatternsOfTheSameRequests(t *testing.T) {
	for _, c := range []struct {
		p, q string
		same bool
	}{
		{"GET /x/{a}", "GET /x/{b}", true},
		{"GET /ab", "GET /a%62", true},
		{"GET API.example.com/x", "GET api.example.com/x", true},
		{"GET /x/{a...}", "GET /x/{b...}", true},
		{"GET /x/", "GET /x/{rest...}", true},
		{"GET /", "GET /{path...}", true},
		{"POST /a/{id}/", "POST /a/{b}/{c...}", true},
		{"GET /x/{a}", "GET /x/a", false},
		{"GET /x/", "GET /x/{$}", false},
		{"GET /x", "POST /x", false},
		{"/x", "GET /x", false},
	} {
		if got := Normal(c.p) == Normal(c.q); got != c.same {
			t.Errorf("Normal(%q) = %q, Normal(%q) = %q: one %v, want %v", c.p, Normal(c.p), c.q, Normal(c.q), got, c.same)
		}
		mux := http.NewServeMux()
		mux.Handle(LowerHost(c.p), http.NotFoundHandler())
		if c.same && handle(mux, LowerHost(c.q)) == nil {
			t.Errorf("%q and %q: one ServeMux holds both, so they are no one route", c.p, c.q)
		}
	}
}
