package httplimit

import (
	"net/http"

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

// match reports whether r matches a pattern under both readings of its
// path, and without its path parameters (routes.Mux.MatchesAsWritten): an
// exemption is never gained by a spelling another endpoint is reached by.
func (e *endpoints) match(r *http.Request) bool {
	return e != nil && e.mux.MatchesAsWritten(r)
}

// cost returns the units r spends: the largest of the costs of the
// patterns it matches under each spelling an upstream serves as the same
// request (routes.Mux.Spellings: its two readings, without a trailing
// slash or path parameters, in lower case, without a format suffix under
// a pattern the suffix steps off, its method in any case), a spelling that
// matches no pattern with a cost costing 1. So "POST /bulk/", "POST
// /bulk;x", "POST /BULK", "POST /bulk.json" and "post /bulk" cost what
// "POST /bulk" does, of patterns that differ only in case the larger, and no
// spelling costs less than another reading of it: a free endpoint (cost 0)
// respelled costs 1, as a strict upstream serves it as another endpoint.
func (e *endpoints) cost(r *http.Request) int64 {
	if e == nil {
		return 1
	}
	c := int64(-1) // until a spelling is read; r as ServeMux reads it always is
	for p := range e.mux.Spellings(r) {
		k, ok := e.costs[p]
		if !ok {
			k = 1
		}
		c = max(c, k)
	}
	return c
}

// twoReadings reports whether r's path has escapes (url.URL.RawPath is
// set only then), so that its decoded form may route elsewhere.
func twoReadings(r *http.Request) bool { return r.URL != nil && r.URL.RawPath != "" }
