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

// A path with escapes has two readings: ServeMux's, segment by segment
// of the escaped path ("/api%2Fgenerate" is one segment), and that of an
// upstream that decodes before it routes (nginx: "/api/generate"), which
// rules use. Neither may let a request spend less: match holds only when
// both readings match, and cost is the larger of theirs.

// match reports whether r matches a pattern under both readings of its
// path.
func (e *endpoints) match(r *http.Request) bool {
	return e.pattern(r) != "" && (!twoReadings(r) || e.pattern(decodedPath(r)) != "")
}

// cost returns the units r spends: its pattern's cost, else 1; the larger
// of its two readings'.
func (e *endpoints) cost(r *http.Request) int64 {
	c := e.costOf(r)
	if twoReadings(r) {
		c = max(c, e.costOf(decodedPath(r)))
	}
	return c
}

// costOf is cost under ServeMux's reading alone.
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

// decodedPath returns a copy of r whose path is r's decoded and cleaned,
// as rules match it.
func decodedPath(r *http.Request) *http.Request {
	u := *r.URL
	u.Path, u.RawPath = cleanPath(u.Path), ""
	r2 := *r
	r2.URL = &u
	return &r2
}
