package config

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// Which requests of a plan's cost a rule takes, judged on witnesses: the
// requests routeRequests builds where a path of the rule and the cost's
// overlap (routes.OverlapPaths), each charged as httplimit charges it
// (planCharges) and matched as httplimit matches a rule (ruleRoutes).
// A witness that both pays the cost and is the rule's is such a request
// for certain; a rule that meets a route on no witness is left alone.

// routeMethods returns the methods a route of no method is tried on: the
// standard methods clients send (RFC 9110's and PATCH), but CONNECT, whose
// requests ServeMux routes by their host alone.
func routeMethods() []string {
	return []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodTrace}
}

// planCharges are a plan's costs as httplimit charges them: a request
// pays the largest cost of the patterns that its spellings match, a
// spelling that matches none costing 1 (see routes.Mux.Spellings and
// httplimit's endpoints.cost).
type planCharges struct {
	mux   routes.Mux
	costs map[string]int64
}

// newPlanCharges returns the charges of costs. A pattern that ServeMux
// refuses, alone or beside another (which httplimit refuses too), is left
// out: it charges nothing here.
func newPlanCharges(costs map[string]int64) *planCharges {
	pc := &planCharges{costs: costs}
	for _, ep := range slices.Sorted(maps.Keys(costs)) {
		_ = pc.mux.Handle(ep)
	}
	return pc
}

// charges reports whether req pays what the pattern ep costs, or more: a
// spelling of it matches ep.
func (pc *planCharges) charges(req *http.Request, ep string) bool {
	for p := range pc.mux.Spellings(req) {
		if p == ep {
			return true
		}
	}
	return false
}

// cost returns what req pays.
func (pc *planCharges) cost(req *http.Request) int64 {
	c, read := int64(1), false // 1: of a plan without costs
	for p := range pc.mux.Spellings(req) {
		k, ok := pc.costs[p]
		if !ok {
			k = 1
		}
		if !read || k > c {
			c, read = k, true
		}
	}
	return c
}

// routeRequests returns the witnesses of the cost pattern ep for m, an
// alternative of a rule: for each path of m ("/" when it has none), each
// path routes.OverlapPaths finds between it and ep's, and each of those
// that ends in a slash without it (the root ServeMux redirects to it, and
// charges as it: "/v1/admin" of "POST /v1/admin/", which a rule of /v1/
// takes beside except_paths: [/v1/admin/]); on ep's method (and
// HEAD for GET), or else on each of m's, or else on every method of
// routeMethods; on ep's host, or else each of m's (a wildcard's as a name
// under it), or else example.com; with m's headers (a header of any value
// set to "x"). A path that is not clean, or a request that cannot be
// made, is left out.
func routeRequests(m httplimit.Match, ep string) []*http.Request {
	method, host, path := patternParts(routes.LowerHost(ep))
	var paths []string
	for _, p := range pathsOf(m) {
		for _, w := range routes.OverlapPaths(p, path) {
			for _, w := range [...]string{w, slashlessRoot(w)} {
				if w != "" && routes.CleanPath(w) == w && !slices.Contains(paths, w) {
					paths = append(paths, w)
				}
			}
		}
	}
	var out []*http.Request
	for _, mt := range requestMethods(method, m.Methods) {
		for _, h := range requestHosts(host, m.Hosts) {
			for _, p := range paths {
				req, err := http.NewRequest(mt, "http://"+h+p, nil)
				if err != nil {
					continue
				}
				for _, hm := range m.Headers {
					req.Header.Set(hm.Name, cmp.Or(hm.Value, "x"))
				}
				out = append(out, req)
			}
		}
	}
	return out
}

// slashlessRoot returns the path w without its trailing slash, "" when
// it has none or is "/".
func slashlessRoot(w string) string {
	if len(w) < 2 || !strings.HasSuffix(w, "/") {
		return ""
	}
	return w[:len(w)-1]
}

// pathsOf returns the paths of m, an alternative of a rule: "/" (every
// path) when it has none.
func pathsOf(m httplimit.Match) []string {
	if len(m.Paths) == 0 {
		return []string{"/"}
	}
	return m.Paths
}

// requestMethods returns the methods a witness of a pattern of method
// (none: "") is sent with, for an alternative of methods (none: nil).
func requestMethods(method string, methods []string) []string {
	var out []string
	switch {
	case method != "":
		out = []string{method}
	case len(methods) > 0:
		for _, m := range methods {
			out = append(out, strings.ToUpper(m))
		}
	default:
		return routeMethods()
	}
	if slices.Contains(out, http.MethodGet) && !slices.Contains(out, http.MethodHead) {
		out = append(out, http.MethodHead) // ServeMux and rules take HEAD for GET
	}
	return out
}

// requestHosts returns the hosts a witness of a pattern of host (none:
// "") is sent to, for an alternative of hosts (none: nil).
func requestHosts(host string, hosts []string) []string {
	switch {
	case host != "":
		return []string{host}
	case len(hosts) == 0:
		return []string{"example.com"}
	}
	var out []string
	for _, h := range hosts {
		h = strings.TrimRight(strings.ToLower(h), ".")
		out = append(out, strings.Replace(h, "*", "x", 1))
	}
	return out
}

// ruleRoutes is a rule compiled to judge witnesses as httplimit matches a
// request: by its Except entries, then by any alternative (see
// altRoutes.takes).
type ruleRoutes struct {
	alts []altRoutes
	exc  []exceptRoutes
}

// altRoutes is an alternative of a rule, its patterns compiled, and in
// lower case with their literals so (as httplimit's alt.lower).
type altRoutes struct {
	m                         httplimit.Match
	paths, except             patternSet
	lowerPaths, lowerExcepted patternSet
}

// exceptRoutes is an entry of a rule's Except, its paths compiled, and in
// lower case.
type exceptRoutes struct {
	e            httplimit.Match
	paths, lower patternSet
}

// newRuleRoutes compiles r.
func newRuleRoutes(r httplimit.Rule) *ruleRoutes {
	rr := &ruleRoutes{}
	for _, e := range r.Except {
		rr.exc = append(rr.exc, exceptRoutes{e: e, paths: newPatternSet(e.Paths), lower: newPatternSet(lowerLiterals(e.Paths))})
	}
	for _, m := range r.Alternatives() {
		rr.alts = append(rr.alts, altRoutes{m: m, paths: newPatternSet(m.Paths), except: newPatternSet(m.ExceptPaths),
			lowerPaths: newPatternSet(lowerLiterals(m.Paths)), lowerExcepted: newPatternSet(lowerLiterals(m.ExceptPaths))})
	}
	return rr
}

// takes reports whether the rule takes req, a witness (see
// routeRequests): no entry of its Except without paths takes it, and an
// alternative does.
func (rr *ruleRoutes) takes(req *http.Request) bool {
	for _, e := range rr.exc {
		if len(e.e.Paths) == 0 && exceptTakes(e.e, req) {
			return false
		}
	}
	for i := range rr.alts {
		if rr.alts[i].takes(req, rr.exc) {
			return true
		}
	}
	return false
}

// takes reports whether the alternative takes req, a witness, whose path
// is clean, without escapes or path parameters: by its methods (GET taking
// HEAD, in any case), hosts and headers, and then by a reading of the
// path (see witnessReadings) that its paths match (see pathsTake) and
// that neither its except_paths nor an entry of exc with paths leave
// out: one matches neither it nor a reading that respells it (see
// leftOutReading), as httplimit's alt.leftOut.
func (a *altRoutes) takes(req *http.Request, exc []exceptRoutes) bool {
	if len(a.m.Methods) > 0 && !slices.ContainsFunc(a.m.Methods, func(m string) bool {
		return strings.EqualFold(m, req.Method) || m == http.MethodGet && req.Method == http.MethodHead
	}) {
		return false
	}
	if len(a.m.Hosts) > 0 && !slices.ContainsFunc(a.m.Hosts, func(h string) bool { return hostTakes(h, req.Host) }) {
		return false
	}
	for _, h := range a.m.Headers {
		if vs := req.Header.Values(h.Name); len(vs) == 0 || h.Value != "" && !slices.Contains(vs, h.Value) {
			return false
		}
	}
	rs := witnessReadings(req.URL.Path)
	var hit []bool
	for _, rd := range rs {
		hit = append(hit, a.excepts(req, rd, exc))
	}
	for i, rd := range rs {
		if !leftOutReading(rs, hit, i) && a.pathsTake(rd) {
			return true
		}
	}
	return false
}

// excepts reports whether the alternative's except_paths or the paths
// of an entry of exc that takes req match the reading rd of req's path.
func (a *altRoutes) excepts(req *http.Request, rd witnessReading, exc []exceptRoutes) bool {
	lower := rd.flags&loweredWitness != 0
	except := &a.except
	if lower {
		except = &a.lowerExcepted
	}
	return except.matchesAny(rd.path) || slices.ContainsFunc(exc, func(e exceptRoutes) bool {
		ps := &e.paths
		if lower {
			ps = &e.lower
		}
		return len(e.e.Paths) > 0 && exceptTakes(e.e, req) && ps.matchesAny(rd.path)
	})
}

// pathsTake reports whether the alternative's paths take the reading rd:
// one matches it (any path, of an alternative of none), and, of a reading
// without a format suffix, the pattern it is routed to does not match the
// path with the suffix (httplimit's matchesUnformatted).
func (a *altRoutes) pathsTake(rd witnessReading) bool {
	paths := &a.paths
	if rd.flags&loweredWitness != 0 {
		paths = &a.lowerPaths
	}
	if rd.flags&unformattedWitness == 0 {
		return len(paths.pats) == 0 || paths.matchesAny(rd.path)
	}
	i, ok := paths.routed(rd.path)
	return ok && !paths.matches(i, rd.from)
}

// exceptTakes reports whether e, an entry of a rule's Except, takes req
// by its methods (as written), hosts and headers (each present, of the
// value given, carried once), as httplimit's exceptEntry.takes; its paths
// are the caller's.
func exceptTakes(e httplimit.Match, req *http.Request) bool {
	if len(e.Methods) > 0 && !slices.Contains(e.Methods, req.Method) {
		return false
	}
	if len(e.Hosts) > 0 && !slices.ContainsFunc(e.Hosts, func(h string) bool { return hostTakes(h, req.Host) }) {
		return false
	}
	for _, h := range e.Headers {
		vs := req.Header.Values(h.Name)
		if len(vs) == 0 || h.Value != "" && (len(vs) != 1 || vs[0] != h.Value) {
			return false
		}
	}
	return true
}

// hostTakes reports whether the host h of a rule ("*.example.com" every
// name under it) takes the request host host, in lower case without a
// port.
func hostTakes(h, host string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if suffix, ok := strings.CutPrefix(h, "*"); ok {
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	}
	return h == host
}

// lowerLiterals returns the path patterns ps with their literal segments
// in lower case (their wildcards' names as they are).
func lowerLiterals(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if !strings.HasPrefix(s, "{") {
				segs[i] = strings.ToLower(s)
			}
		}
		out = append(out, strings.Join(segs, "/"))
	}
	return out
}

// marker is the handler a patternSet registers for each of its patterns,
// to tell the pattern ServeMux routes a path to from its redirect.
type marker struct {
	http.Handler
	i int
}

// patternSet is a list of ServeMux path patterns, each in a ServeMux of
// its own (nil where ServeMux refuses it), and all in one (nil where
// ServeMux refuses them together), to tell which of them it routes a path
// to.
type patternSet struct {
	pats []string
	one  []*http.ServeMux
	all  *http.ServeMux
}

// newPatternSet compiles pats.
func newPatternSet(pats []string) patternSet {
	s := patternSet{pats: pats, all: http.NewServeMux()}
	for i, p := range pats {
		mux := http.NewServeMux()
		if !handlesWith(mux, p, &marker{http.NotFoundHandler(), i}) {
			mux = nil
		}
		s.one = append(s.one, mux)
		if s.all != nil && !handlesWith(s.all, p, &marker{http.NotFoundHandler(), i}) {
			s.all = nil
		}
	}
	return s
}

// routedBy returns the pattern of mux that the path p is routed to (not
// redirected), false for none.
func routedBy(mux *http.ServeMux, p string) (int, bool) {
	if mux == nil {
		return 0, false
	}
	h, _ := mux.Handler(&http.Request{Method: http.MethodGet, Host: "example.com", URL: &url.URL{Path: p}})
	m, ok := h.(*marker)
	if !ok {
		return 0, false
	}
	return m.i, true
}

// matches reports whether the i-th pattern matches the path p.
func (s *patternSet) matches(i int, p string) bool {
	_, ok := routedBy(s.one[i], p)
	return ok
}

// matchesAny reports whether a pattern matches the path p.
func (s *patternSet) matchesAny(p string) bool {
	for i := range s.pats {
		if s.matches(i, p) {
			return true
		}
	}
	return false
}

// routed returns the pattern ServeMux routes the path p to, of all (the
// most specific that matches it), false for none or when ServeMux refuses
// them together.
func (s *patternSet) routed(p string) (int, bool) { return routedBy(s.all, p) }
