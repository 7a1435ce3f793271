package config

import (
	"fmt"
	"net"
	"net/http"
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
// every request it matches is exempt by a route of c.Exempt first.
func (d *decoder) costsExempted(c *Config, raw *rawConfig) {
	for _, rp := range raw.plans {
		for ep, n := range rp.costNodes {
			if checkPattern(ep) != nil {
				continue
			}
			for i, e := range c.Exempt {
				loc, ok := raw.locs[fmt.Sprintf("Exempt[%d]", i)]
				if !ok || checkPattern(e) != nil || !exemptCovers(routes.LowerHost(e), routes.LowerHost(ep)) {
					continue
				}
				d.Errorf(n, rp.path+".costs."+ep, "%q never applies: every request it matches is exempt (%s %q, line %d), and spends nothing",
					ep, loc.path, e, loc.node.Line)
				break
			}
		}
	}
}
