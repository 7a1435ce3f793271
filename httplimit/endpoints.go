package httplimit

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// endpoints matches requests to ServeMux patterns: the exempt list, or a
// plan's costs. Matching uses net/http's own rules (method, host, wildcards,
// most specific pattern wins), but for hosts, which are matched as a rule's
// are: in any case, without the root dot ("API.example.com." is
// api.example.com), where ServeMux compares them byte for byte.
type endpoints struct {
	mux   *http.ServeMux
	costs map[string]int64
	// hosts: some pattern names a host, so a request's host is matched in
	// lower case and without the root dot.
	hosts bool
	// configured maps a pattern registered with its host in lower case to
	// the pattern as configured, where the two differ.
	configured map[string]string
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
	register := func(p string) {
		lp := lowerHost(p)
		if i, j := hostSpan(lp); j > i {
			e.hosts = true
		}
		if lp != p {
			if e.configured == nil {
				e.configured = map[string]string{}
			}
			e.configured[lp] = p
		}
		e.mux.Handle(lp, http.NotFoundHandler())
	}
	for _, p := range patterns {
		register(p)
	}
	for p := range costs {
		register(p)
	}
	if !slices.Contains(patterns, "/") {
		if _, ok := costs["/"]; !ok {
			e.mux.Handle("/", http.NotFoundHandler())
			e.catchAll = true
		}
	}
	return e, nil
}

// pattern returns the pattern r matches, as configured, or "".
func (e *endpoints) pattern(r *http.Request) string {
	if e == nil {
		return ""
	}
	if e.hosts {
		if h := matchedHost(r.Host); h != r.Host {
			r2 := *r
			r2.Host = h
			r = &r2
		}
	}
	_, p := e.mux.Handler(r)
	if p == "/" && e.catchAll {
		return ""
	}
	if c, ok := e.configured[p]; ok {
		return c
	}
	return p
}

// hostSpan returns where the host of the ServeMux pattern p
// ("[METHOD ][HOST]/PATH") is, p[i:j]; i == j when it has none.
func hostSpan(p string) (i, j int) {
	i = strings.IndexAny(p, " \t") + 1 // after the method and its blanks, if any
	for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
		i++
	}
	j = strings.IndexByte(p[i:], '/')
	if j < 0 {
		return i, i
	}
	return i, i + j
}

// lowerHost returns the ServeMux pattern p with its host, if it has one,
// in lower case and without the root dot.
func lowerHost(p string) string {
	i, j := hostSpan(p)
	if i == j {
		return p
	}
	host := strings.ToLower(p[i:j])
	for len(host) > 1 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
	}
	return p[:i] + host + p[j:]
}

// matchedHost returns the request host h (with its port, if any) as
// endpoints match it: in lower case, without trailing dots. It is h itself
// when h is so already, as most hosts are.
func matchedHost(h string) string {
	name, port := h, ""
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		name, port = h[:i], h[i:]
	}
	if !strings.HasSuffix(name, ".") && !strings.ContainsFunc(name, func(c rune) bool { return 'A' <= c && c <= 'Z' }) {
		return h
	}
	name = strings.ToLower(name)
	for len(name) > 1 && name[len(name)-1] == '.' {
		name = name[:len(name)-1]
	}
	return name + port
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
