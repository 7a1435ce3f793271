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
// written as a glob (routes.GlobError). Exempt routes and costs are
// refused so by httplimit's validation; this is for the patterns the
// configuration alone reads (degradation classes).
func (d *decoder) patternGlob(n *yaml.Node, p, s string) bool {
	_, _, path := patternParts(s)
	if err := routes.GlobError(path); err != nil {
		d.Errorf(n, p, "%q: %v", s, err)
		return true
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

// handles registers pattern in mux, reporting false if mux refuses it.
func handles(mux *http.ServeMux, pattern string) bool {
	return handlesWith(mux, pattern, http.NotFoundHandler())
}

// costsExempted refuses each cost of a plan that no request is charged:
// an exempt route takes every request of the cost's host (of every host),
// on every method and path, first. Only such a route is certain to: exempt
// routes match a request's method and path as ServeMux reads them, while a
// cost matches its other readings too (a method in another case, without a
// trailing slash or path parameters: see httplimit), so that a narrower
// route, even the cost's own, leaves the requests that respell it charged.
func (d *decoder) costsExempted(c *Config, raw *rawConfig) {
	type exemptAt struct {
		i   int // in c.Exempt
		loc location
	}
	whole := map[string]exemptAt{} // a host in lower case ("" for every host) → the first route that takes all of it
	for i, e := range c.Exempt {
		loc, ok := raw.locs[fmt.Sprintf("Exempt[%d]", i)]
		if !ok || routes.Check(e) != nil {
			continue
		}
		method, host, path := patternParts(routes.LowerHost(e))
		if _, seen := whole[host]; method == "" && everyPath(path) && !seen {
			whole[host] = exemptAt{i, loc}
		}
	}
	if len(whole) == 0 {
		return
	}
	for _, rp := range raw.plans {
		for ep, n := range rp.costNodes {
			if routes.Check(ep) != nil {
				continue
			}
			_, host, _ := patternParts(routes.LowerHost(ep))
			at, found := whole[host]
			if all, ok := whole[""]; ok && (!found || all.i < at.i) {
				at, found = all, true
			}
			if !found {
				continue
			}
			d.Errorf(n, rp.path+".costs."+ep, "%q never applies: every request it matches is exempt (%s %q, line %d), and spends nothing",
				ep, at.loc.path, c.Exempt[at.i], at.loc.node.Line)
		}
	}
}

// everyPath reports whether path, a ServeMux pattern's, matches every
// path: "/" or "/{name...}".
func everyPath(path string) bool {
	wildcard, ok := strings.CutPrefix(path, "/{")
	return path == "/" || ok && strings.HasSuffix(wildcard, "...}") && !strings.Contains(wildcard, "/")
}

// method refuses m, a rule's method, when it is a standard method in
// another case ("get"): a rule matches a request's method in any case
// (httplimit.Rule.Methods), but only its GET matches HEAD too, and
// methods are written as clients send them.
func (d *decoder) method(n *yaml.Node, p, m string) {
	if up, ok := routes.MethodInOtherCase(m); ok {
		d.Errorf(n, p, "%q: write %s, as clients send it (a rule's GET matches HEAD too, its %s does not)", m, up, m)
	}
}

// patternMethod is method for the method of the ServeMux pattern s, if it
// has one ("get /healthz").
func (d *decoder) patternMethod(n *yaml.Node, p, s string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return
	}
	if up, ok := routes.MethodInOtherCase(s[:i]); ok {
		d.Errorf(n, p, "%q never matches: methods are case-sensitive, and clients send %s (%s%s)", s, up, up, s[i:])
	}
}
