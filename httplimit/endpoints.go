package httplimit

import (
	"fmt"
	"net/http"
	"slices"
)

// endpoints matches requests to ServeMux patterns: the exempt list, or a
// plan's costs. Matching uses net/http's own rules (method, host, wildcards,
// most specific pattern wins).
type endpoints struct {
	mux   *http.ServeMux
	costs map[string]int64
	// catchAll: "/" was registered by newEndpoints, not configured, so
	// that every request matches some pattern. A request that matches
	// nothing makes ServeMux work out which methods would have matched
	// (for a 405 it never sends here): six allocations per request.
	catchAll bool
}

func newEndpoints(patterns []string, costs map[string]int64) (e *endpoints, err error) {
	if len(patterns) == 0 && len(costs) == 0 {
		return nil, nil
	}
	defer func() { // ServeMux panics on invalid or conflicting patterns
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("%v", r)
		}
	}()
	e = &endpoints{mux: http.NewServeMux(), costs: costs}
	for _, p := range patterns {
		e.mux.Handle(p, http.NotFoundHandler())
	}
	for p := range costs {
		e.mux.Handle(p, http.NotFoundHandler())
	}
	if !slices.Contains(patterns, "/") {
		if _, ok := costs["/"]; !ok {
			e.mux.Handle("/", http.NotFoundHandler())
			e.catchAll = true
		}
	}
	return e, nil
}

// pattern returns the pattern r matches, or "".
func (e *endpoints) pattern(r *http.Request) string {
	if e == nil {
		return ""
	}
	_, p := e.mux.Handler(r)
	if p == "/" && e.catchAll {
		return ""
	}
	return p
}

func (e *endpoints) match(r *http.Request) bool { return e.pattern(r) != "" }

// cost returns the units r spends: its pattern's cost, else 1.
func (e *endpoints) cost(r *http.Request) int64 {
	if p := e.pattern(r); p != "" {
		if c, ok := e.costs[p]; ok {
			return c
		}
	}
	return 1
}
