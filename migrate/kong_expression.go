package migrate

import "strings"

// kongExpressions reads the expression of each route of Kong's
// expressions router. An expression the import reads (kongExpression)
// becomes the route's paths and methods; the others' routes are left out,
// their plugins with them, and reported: Kong gives such a route only the
// requests its expression matches, which the import cannot tell.
func (t *Translation) kongExpressions(f *kongFile) {
	read := func(routes []kongRoute) []kongRoute {
		out := routes[:0]
		for _, r := range routes {
			if r.Expression != "" {
				where := "route " + r.Name + " expression"
				paths, methods, ok := kongExpression(r.Expression)
				if !ok {
					t.differs(where, "%q is not an expression the import reads (http.path ^= \"/…\", http.path == \"/…\" and http.method == \"…\" joined by &&): the route and its plugins are not imported; limit its requests by a rule of your own.", r.Expression)
					continue
				}
				t.same(where, "%q: the route's paths %v and methods %v.", r.Expression, paths, methods)
				t.differs(where, "Kong's expressions router tries routes in order of their priority field; the import orders them as the traditional router does (longest paths first): where two routes match a request, check that the rule of the one Kong picks counts it.")
				r.Paths, r.Methods = paths, methods
			}
			out = append(out, r)
		}
		return out
	}
	for i := range f.Services {
		f.Services[i].Routes = read(f.Services[i].Routes)
	}
	f.Routes = read(f.Routes)
}

// kongExpression returns the Kong route paths and methods of expression
// e when it is a conjunction (&&) of at most one path predicate,
// http.path ^= "/…" (a prefix) or http.path == "/…" (an exact path of
// letters, digits, slashes, hyphens and underscores), and at most one
// http.method == "…"; ok is false for any other expression.
func kongExpression(e string) (paths, methods []string, ok bool) {
	for _, clause := range strings.Split(e, "&&") {
		field, op, value, ok := kongPredicate(strings.TrimSpace(clause))
		switch {
		case !ok:
			return nil, nil, false
		case field == "http.path" && paths == nil && strings.HasPrefix(value, "/") && op == "^=":
			paths = []string{value}
		case field == "http.path" && paths == nil && op == "==":
			p := "~" + value + "$"
			if _, exact := kongExactPath(p); !exact {
				return nil, nil, false
			}
			paths = []string{p}
		case field == "http.method" && methods == nil && op == "==" && value != "" && strings.Trim(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "":
			methods = []string{value}
		default:
			return nil, nil, false
		}
	}
	return paths, methods, true
}

// kongPredicate splits predicate p, `field op "value"`, of a value in
// double quotes without escapes.
func kongPredicate(p string) (field, op, value string, ok bool) {
	parts := strings.Fields(p)
	if len(parts) != 3 {
		return "", "", "", false
	}
	v := parts[2]
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || strings.ContainsAny(v[1:len(v)-1], "\"\\") {
		return "", "", "", false
	}
	return parts[0], parts[1], v[1 : len(v)-1], true
}
