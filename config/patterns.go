package config

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/routes"
)

// patternParts splits the ServeMux pattern s into its method (""
// for any), host ("" for any) and path.
func patternParts(s string) (method, host, path string) {
	rest := s
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		method, rest = s[:i], strings.TrimLeft(s[i:], " \t")
	}
	if slash := strings.IndexByte(rest, '/'); slash >= 0 {
		return method, rest[:slash], rest[slash:]
	}
	return method, rest, ""
}

// patternGlob refuses the ServeMux pattern s when a segment of its path is
// written as a glob ("/reports/*", "/files/*.png"): ServeMux reads "*" as
// itself, so s would match only a path with that very segment. Exempt
// routes and costs are refused so by httplimit's validation; this is for
// the patterns the configuration alone reads (degradation classes).
func (d *decoder) patternGlob(n *yaml.Node, p, s string) bool {
	_, _, path := patternParts(s)
	parts := strings.Split(path, "/")
	for i, part := range parts {
		if strings.Contains(part, "*") {
			d.Errorf(n, p, "%q: segment %q is no wildcard: ServeMux matches it as it is written, so it matches only the path "+
				"with that segment (the subtree is %q, one segment {name}, the rest {name...})", s, part, strings.Join(parts[:i], "/")+"/")
			return true
		}
	}
	return false
}

// patternHost refuses the ServeMux pattern s when its host has a port:
// ServeMux matches a request's host without its port, so no request
// matches it.
func (d *decoder) patternHost(n *yaml.Node, p, s string) {
	method, host, path := patternParts(s)
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		return
	}
	if strings.Contains(h, ":") { // IPv6: no single pattern to suggest
		d.Errorf(n, p, "%q never matches: a request's host is matched without its port", s)
		return
	}
	if method != "" {
		method += " "
	}
	d.Errorf(n, p, "%q never matches: a request's host is matched without its port (write %q)", s, method+h+path)
}

// exemptCovers reports whether every request the valid ServeMux pattern
// cost matches, under both of its path's readings (see httplimit), is
// matched by the valid pattern exempt as well, so that it is exempt before
// any cost applies. It answers only when that is certain: cost's path must
// have no wildcard of one segment, which a path with an escaped slash
// (/items/a%2Fb) fills under ServeMux's reading and not under the decoded
// one, which exempt routes also require.
func exemptCovers(exempt, cost string) bool {
	method, host, path := patternParts(cost)
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && seg != "{$}" && !strings.HasSuffix(seg, "...}") {
			return false
		}
	}
	if routeOf(exempt) == routeOf(cost) {
		return true
	}
	both, only := http.NewServeMux(), http.NewServeMux()
	if !handles(both, exempt) || !handles(both, cost) || !handles(only, exempt) {
		return false // they conflict: they overlap, neither more specific
	}
	// A request cost matches: both match it, so one of them is more
	// specific than the other; when it is cost, exempt matches all its
	// requests.
	if method == "" {
		method = http.MethodGet
	}
	if host == "" {
		host = "sluice.invalid"
	}
	path = strings.ReplaceAll(path, "{$}", "")
	for {
		i := strings.Index(path, "{")
		if i < 0 {
			break
		}
		j := strings.Index(path[i:], "}")
		path = path[:i] + "x" + path[i+j+1:]
	}
	r, err := http.NewRequest(method, "http://"+host+path, nil)
	if err != nil {
		return false
	}
	_, got := both.Handler(r)
	_, byExempt := only.Handler(r)
	return got == cost && byExempt == exempt
}

// handles registers pattern in mux, reporting false if mux refuses it.
func handles(mux *http.ServeMux, pattern string) (ok bool) {
	defer func() { ok = recover() == nil }()
	mux.Handle(pattern, http.NotFoundHandler())
	return true
}

// costsExempted refuses each cost of a plan that no request is charged:
// every request it matches is exempt by a route of c.Exempt first. Each
// cost is judged once, however many plans list it, and only against the
// routes that may match its requests (mayMatch).
func (d *decoder) costsExempted(c *Config, raw *rawConfig) {
	type exemptRoute struct {
		written string
		pattern string // lowered (routes.LowerHost)
		parts   routeParts
		loc     location
	}
	var exempts []exemptRoute
	for i, e := range c.Exempt {
		loc, ok := raw.locs[fmt.Sprintf("Exempt[%d]", i)]
		if !ok || checkPattern(e) != nil {
			continue
		}
		lowered := routes.LowerHost(e)
		exempts = append(exempts, exemptRoute{e, lowered, partsOf(lowered), loc})
	}
	exemptBy := map[string]int{} // a cost's pattern → the index in exempts of the route that takes it, or -1
	for _, rp := range raw.plans {
		for ep, n := range rp.costNodes {
			i, judged := exemptBy[ep]
			if !judged {
				i = -1
				if checkPattern(ep) == nil {
					cost := routes.LowerHost(ep)
					parts := partsOf(cost)
					for j, e := range exempts {
						if mayMatch(e.parts, parts) && exemptCovers(e.pattern, cost) {
							i = j
							break
						}
					}
				}
				exemptBy[ep] = i
			}
			if i < 0 {
				continue
			}
			e := exempts[i]
			d.Errorf(n, rp.path+".costs."+ep, "%q never applies: every request it matches is exempt (%s %q, line %d), and spends nothing",
				ep, e.loc.path, e.written, e.loc.node.Line)
		}
	}
}

// routeParts is a valid ServeMux pattern split as ServeMux reads it: its
// method ("" for any), host ("" for any) and path segments as written.
type routeParts struct {
	method, host string
	segments     []string
}

// partsOf splits the valid ServeMux pattern pattern into its routeParts.
func partsOf(pattern string) routeParts {
	method, host, path := patternParts(pattern)
	return routeParts{method, host, strings.Split(path, "/")[1:]}
}

// mayMatch reports whether the route exempt may match the request that
// exemptCovers builds for cost (its method, or GET; its host, or none;
// its path with each wildcard filled): false only when that is certain,
// so that only the routes it is true for need exemptCovers. It is false
// when exempt's method or host is another, or when a segment exempt
// matches as written differs from cost's at the same place, or cost's
// path has more segments, before either has one that matches several
// paths (a wildcard of cost's, {$}, a trailing slash, {name...}).
func mayMatch(exempt, cost routeParts) bool {
	method := cmp.Or(cost.method, http.MethodGet)
	if exempt.method != "" && exempt.method != method && !(exempt.method == http.MethodGet && method == http.MethodHead) {
		return false
	}
	if exempt.host != "" && exempt.host != cost.host {
		return false
	}
	for i := 0; ; i++ {
		if i == len(cost.segments) {
			return true // exempt may have a trailing slash, to which ServeMux redirects cost's path
		}
		if i == len(exempt.segments) {
			return false // cost's path is longer, and exempt matches no segment past its last
		}
		c, ok := literalSegment(cost.segments[i])
		if !ok {
			return true
		}
		e := exempt.segments[i]
		if strings.HasPrefix(e, "{") && !strings.HasSuffix(e, "...}") && e != "{$}" {
			continue // one segment, any: c is one
		}
		if e, ok = literalSegment(e); !ok {
			return true
		}
		if e != c {
			return false
		}
	}
}

// literalSegment returns the segment seg of a pattern's path as ServeMux
// matches it, unescaped, when it matches one segment as written: not a
// wildcard, {$} or the empty segment of a trailing slash.
func literalSegment(seg string) (string, bool) {
	if seg == "" || strings.HasPrefix(seg, "{") {
		return "", false
	}
	u, err := url.PathUnescape(seg)
	return u, err == nil
}
