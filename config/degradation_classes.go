// A degradation class's ServeMux patterns, each route in one class.

package config

import (
	"net/http"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/routes"
)

// patterns decodes the ServeMux patterns of the degradation class class,
// refusing one of a route another class holds (classOf, which it extends)
// and one the class's ServeMux cannot hold beside those listed before it,
// hosts read as the server's muxes read them (routes.LowerHost).
func (d *decoder) patterns(n *yaml.Node, path, class string, classOf map[string]classed) []string {
	var out []string
	mux := http.NewServeMux() // out's patterns
	d.List(n, path, func(_ int, e *yaml.Node, p string) {
		s := d.Str(e, p)
		if err := routes.Check(s); err != nil {
			d.Errorf(e, p, "%v", err)
			return
		}
		if d.patternGlob(e, p, s) {
			return
		}
		d.patternMethod(e, p, s)
		d.patternHost(e, p, s)
		route := routes.Normal(s)
		if c, ok := classOf[route]; ok && c.class != class {
			if c.pattern == s {
				d.Errorf(e, p, "%q is in %s already", s, c.class)
			} else {
				d.Errorf(e, p, "%q is in %s already (as %q): a route is in one class", s, c.class, c.pattern)
			}
			return
		}
		if !handles(mux, routes.LowerHost(s)) {
			for _, prev := range out {
				if patternsConflict(routes.LowerHost(prev), routes.LowerHost(s)) {
					d.Errorf(e, p, "%q conflicts with %q, listed before it: a ServeMux cannot hold both", s, prev)
					return
				}
			}
		}
		if _, ok := classOf[route]; !ok {
			classOf[route] = classed{class, s}
		}
		out = append(out, s)
	})
	return out
}

// classed is the class a route was first listed in, and as what pattern.
type classed struct{ class, pattern string }

// patternsConflict reports whether a ServeMux refuses b beside a (valid
// patterns both): they match the same requests, or neither is more
// specific than the other.
func patternsConflict(a, b string) (conflict bool) {
	mux := http.NewServeMux()
	mux.Handle(a, http.NotFoundHandler())
	defer func() { conflict = recover() != nil }()
	mux.Handle(b, http.NotFoundHandler())
	return false
}
