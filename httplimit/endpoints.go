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
	// lower matches a path in lower case to the costs' patterns with their
	// paths in lower case, whose costs lowerCosts holds (of patterns that
	// differ only in case, the larger): Express (by default) and ASP.NET
	// Core route /BULK as /bulk. upperLits: some pattern's path has an
	// upper-case letter.
	lower      routes.Mux
	lowerCosts map[string]int64
	upperLits  bool
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
	for p, c := range costs {
		_, j := routes.HostSpan(p)
		lp := p[:j] + strings.ToLower(p[j:])
		e.upperLits = e.upperLits || lp != p
		if old, ok := e.lowerCosts[lp]; ok {
			e.lowerCosts[lp] = max(old, c)
			continue
		}
		if e.lower.Handle(lp) != nil {
			continue // in lower case, one that ServeMux refuses beside another: matched in its own case only
		}
		if e.lowerCosts == nil {
			e.lowerCosts = map[string]int64{}
		}
		e.lowerCosts[lp] = c
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
// withoutParams), each also in lower case.

// match reports whether r matches a pattern under both readings of its
// path, and without its path parameters (routes.Mux.MatchesAsWritten): an
// exemption is never gained by a spelling another endpoint is reached by.
func (e *endpoints) match(r *http.Request) bool {
	return e != nil && e.mux.MatchesAsWritten(r)
}

// cost returns the units r spends: its pattern's cost, else 1; the larger
// of its two readings', and of its path's without a trailing slash or
// path parameters or in lower case, which upstreams that ignore them
// serve it as ("POST /bulk/", "POST /bulk;x" and "POST /BULK" cost what
// "POST /bulk" does). A method in another case than its pattern's
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
		c = max(c, e.costOf(routes.WithPath(r, u)))
	}
	plain := withoutParams(p)
	if plain != p {
		c = max(c, e.costOf(routes.WithPath(r, plain)))
		if u, ok := unslashed(plain); ok {
			c = max(c, e.costOf(routes.WithPath(r, u)))
		}
	}
	if e.lowerCosts == nil {
		return c
	}
	for i, rp := range [...]string{p, plain} {
		lp := strings.ToLower(rp)
		if lp == rp && !e.upperLits || i > 0 && rp == p {
			continue // matched above, in the same case, or p again
		}
		c = max(c, e.lowerCostOf(routes.WithPath(r, lp)))
		if u, ok := unslashed(lp); ok {
			c = max(c, e.lowerCostOf(routes.WithPath(r, u)))
		}
	}
	return c
}

// lowerCostOf is costOf of a request whose path is in lower case, by the
// costs' patterns in lower case.
func (e *endpoints) lowerCostOf(r *http.Request) int64 {
	if c, ok := e.lowerCosts[e.lower.Pattern(r)]; ok {
		return c
	}
	return 1
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
