package httplimit

import (
	"net/http"
	"strings"

	"github.com/sluice-dev/sluice/internal/routes"
)

// endpoints matches requests to ServeMux patterns: the exempt list, or a
// plan's costs, as package routes matches them (net/http's rules, hosts in
// any case and without the root dot).
type endpoints struct {
	mux   routes.Mux
	costs map[string]int64
}

func newEndpoints(patterns []string, costs map[string]int64) (*endpoints, error) {
	if len(patterns) == 0 && len(costs) == 0 {
		return nil, nil
	}
	e := &endpoints{costs: costs}
	for _, p := range patterns {
		if err := e.mux.Handle(p); err != nil {
			return nil, err
		}
	}
	for p := range costs {
		if err := e.mux.Handle(p); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// pattern returns the pattern r matches, as configured, or "".
func (e *endpoints) pattern(r *http.Request) string {
	if e == nil {
		return ""
	}
	return e.mux.Pattern(r)
}

// A path with escapes has two readings (see routes.Decoded). Neither may
// let a request spend less: match holds only when both readings match,
// and cost is the larger of theirs, and of the decoded path's without a
// trailing slash (see unslashed) and without its path parameters (see
// withoutParams).

// match reports whether r matches a pattern under both readings of its
// path.
func (e *endpoints) match(r *http.Request) bool {
	return e != nil && e.mux.MatchesAll(r)
}

// cost returns the units r spends: its pattern's cost, else 1; the larger
// of its two readings', and of its path's without a trailing slash or
// path parameters, which upstreams that ignore them serve it as ("POST
// /bulk/" and "POST /bulk;x" cost what "POST /bulk" does). A method in another case than its pattern's
// ("post" for "POST /bulk") costs what the method costs: an upstream that
// folds the case of a method serves it as that method.
func (e *endpoints) cost(r *http.Request) int64 {
	if e == nil {
		return 1
	}
	if up := strings.ToUpper(r.Method); up != r.Method {
		r2 := *r
		r2.Method = up
		r = &r2
	}
	c := e.costOf(r)
	if d := routes.Decoded(r); d != nil {
		c = max(c, e.costOf(d))
	}
	p := routes.CleanPath(r.URL.Path)
	if u, ok := unslashed(p); ok {
		c = max(c, e.costOf(withPath(r, u)))
	}
	if plain := withoutParams(p); plain != p {
		c = max(c, e.costOf(withPath(r, plain)))
		if u, ok := unslashed(plain); ok {
			c = max(c, e.costOf(withPath(r, u)))
		}
	}
	return c
}

// withPath returns a copy of r whose path is p, decoded and cleaned.
func withPath(r *http.Request, p string) *http.Request {
	u := *r.URL
	u.Path, u.RawPath = p, ""
	r2 := *r
	r2.URL = &u
	return &r2
}

// costOf is cost under one reading.
func (e *endpoints) costOf(r *http.Request) int64 {
	if p := e.pattern(r); p != "" {
		if c, ok := e.costs[p]; ok {
			return c
		}
	}
	return 1
}

// twoReadings reports whether r's path has escapes (url.URL.RawPath is
// set only then), so that its decoded form may route elsewhere.
func twoReadings(r *http.Request) bool { return r.URL != nil && r.URL.RawPath != "" }
