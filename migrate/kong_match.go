package migrate

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// kongServiceRef is a reference to an entity by its name or id, as decK
// writes it ("service: api" or "service: {name: api}"): a top-level
// route's service, a top-level plugin's service, route, consumer or
// consumer group; "" for none.
type kongServiceRef string

// UnmarshalYAML reads a service reference written as a name, or as a
// mapping of name or id.
func (s *kongServiceRef) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*s = kongServiceRef(n.Value)
	case yaml.MappingNode:
		var ref struct{ Name, ID string }
		if err := n.Decode(&ref); err != nil {
			return err
		}
		*s = kongServiceRef(or(ref.Name, ref.ID))
	}
	return nil
}

// routePaths returns a route's paths: "/" for a route without, which
// matches every path.
func routePaths(r kongRoute) []string {
	if len(r.Paths) == 0 {
		return []string{"/"}
	}
	return r.Paths
}

// withServiceRoutes moves the top-level routes that name a service (by
// name or id, as decK writes either) into that service's routes, where its
// plugins apply to them (a service the file does not define is added,
// without plugins); the routes without a service are returned.
func withServiceRoutes(services []kongService, routes []kongRoute) ([]kongService, []kongRoute) {
	var loose []kongRoute
	for _, r := range routes {
		if r.Service == "" {
			loose = append(loose, r)
			continue
		}
		i := slices.IndexFunc(services, func(s kongService) bool {
			return s.Name != "" && s.Name == string(r.Service) || s.ID != "" && s.ID == string(r.Service)
		})
		if i < 0 {
			services, i = append(services, kongService{Name: string(r.Service)}), len(services)
		}
		services[i].Routes = append(services[i].Routes, r)
	}
	return services, loose
}

// serviceRoutes returns the routes of services.
func serviceRoutes(services []kongService) []kongRoute {
	var out []kongRoute
	for _, s := range services {
		out = append(out, s.Routes...)
	}
	return out
}

// kongMatch is what a plugin's rule matches of its routes: their path
// patterns' sources (Kong route paths, "/" for a route without), and the
// hosts and methods a rule can match (nil: any).
type kongMatch struct {
	paths, hosts, methods []string
	// groups, when set, part the routes into matches that each match
	// exactly their routes' requests (kongRouteGroups): one alternative
	// of a rule each.
	groups []kongMatch
}

// kongRouteGroups parts the matches of routes into groups of which a
// rule's match (paths, hosts and methods matched apart) matches exactly
// the routes' requests: all of them in one when every host and method of any route
// joined with every path of any is some route's (the cross product is the
// routes), else one group per set of hosts and methods, which the group's
// routes share. Routes of one set of hosts and methods are one group
// without joining anything; the joins of several sets are weighed only up
// to kongJoinsBound (else the groups stand apart, each still exact), so
// the work grows with the routes' paths, hosts and methods, not with their
// product.
func kongRouteGroups(ms []kongMatch) []kongMatch {
	if len(ms) == 0 {
		return nil
	}
	var out []kongMatch
	var seen []map[string]bool // by group, its paths
	for _, m := range ms {
		i := slices.IndexFunc(out, func(g kongMatch) bool { return sameSet(g.hosts, m.hosts) && sameSet(g.methods, m.methods) })
		if i < 0 {
			out, seen = append(out, kongMatch{hosts: slices.Clone(m.hosts), methods: slices.Clone(m.methods)}), append(seen, map[string]bool{})
			i = len(out) - 1
		}
		for _, p := range m.paths {
			if !seen[i][p] {
				seen[i][p], out[i].paths = true, append(out[i].paths, p)
			}
		}
	}
	if len(out) == 1 {
		return out
	}
	var all kongMatch
	inAll := map[string]bool{}
	for i, m := range ms {
		for _, p := range m.paths {
			if !inAll[p] {
				inAll[p], all.paths = true, append(all.paths, p)
			}
		}
		if i == 0 {
			all.hosts, all.methods = slices.Clone(m.hosts), slices.Clone(m.methods)
		} else {
			all.hosts, all.methods = unionOrAny(all.hosts, m.hosts), unionOrAny(all.methods, m.methods)
		}
	}
	// The cross product is the routes only if each of its elements is
	// some group's, so it holds no more elements than the groups do.
	n, held := len(all.paths)*len(orAny(all.hosts))*len(orAny(all.methods)), 0
	for _, g := range out {
		held += len(g.paths) * len(orAny(g.hosts)) * len(orAny(g.methods))
	}
	if n > held || n*len(out) > kongJoinsBound {
		return out
	}
	hosts, methods := make([]map[string]bool, len(out)), make([]map[string]bool, len(out))
	for i, g := range out {
		hosts[i], methods[i] = map[string]bool{}, map[string]bool{}
		for _, h := range orAny(g.hosts) {
			hosts[i][h] = true
		}
		for _, v := range orAny(g.methods) {
			methods[i][v] = true
		}
	}
	covered := func(p, h, v string) bool {
		for i := range out {
			if seen[i][p] && hosts[i][h] && methods[i][v] {
				return true
			}
		}
		return false
	}
	for _, p := range all.paths {
		for _, h := range orAny(all.hosts) {
			for _, v := range orAny(all.methods) {
				if !covered(p, h, v) {
					return out
				}
			}
		}
	}
	return []kongMatch{all}
}

// kongJoinsBound bounds the joins of a path, a host and a method that
// kongRouteGroups weighs against its groups (the joins times the groups).
const kongJoinsBound = 1 << 18

// orAny returns vs, or one "" (anything) for none.
func orAny(vs []string) []string {
	if len(vs) == 0 {
		return []string{""}
	}
	return vs
}

// kongRouteMatch returns what a rule matches of route r, reporting at
// where what it cannot match as Kong does.
func (t *Translation) kongRouteMatch(r kongRoute, where string) kongMatch {
	m := kongMatch{paths: r.Paths}
	if len(m.paths) == 0 {
		m.paths = []string{"/"}
	}
	for _, p := range m.paths {
		if strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/") && !slices.Contains(r.segmented, p) && len(kongPathPatterns(p)) == 2 {
			t.differs(where, "Kong matches the route path %s as a string prefix, so it also takes %sx…; the rule's patterns %s and %s/ match the path and what lies below it, not other names that start the same way: those requests are not limited.", p, p, p, p)
		}
	}
	for _, h := range r.Hosts {
		host := strings.ToLower(h)
		if name, port, ok := strings.Cut(host, ":"); ok && port != "" && strings.Trim(port, "0123456789") == "" {
			t.differs(where, "Kong matches host %s on port %s only; the rule matches %s on any port.", h, port, name)
			host = name
		}
		switch {
		case validHostName(host), strings.HasPrefix(host, "*.") && validHostName(host[2:]):
			if !slices.Contains(m.hosts, host) {
				m.hosts = append(m.hosts, host)
			}
		default:
			t.differs(where, "the route's host %s is not one sluice's rules match (a name, or a leading wildcard such as *.example.com): the rule matches every host, so requests to other hosts on its paths count too.", h)
			m.hosts = nil
			return t.kongRouteMethods(r, m, where)
		}
	}
	return t.kongRouteMethods(r, m, where)
}

// kongRouteMethods adds route r's methods to m.
func (t *Translation) kongRouteMethods(r kongRoute, m kongMatch, where string) kongMatch {
	for _, method := range r.Methods {
		method = strings.ToUpper(method)
		if !validHeaderName(method) {
			t.differs(where, "the route's method %q is not a method sluice's rules match: the rule matches every method.", method)
			m.methods = nil
			return m
		}
		if !slices.Contains(m.methods, method) {
			m.methods = append(m.methods, method)
		}
	}
	if slices.Contains(m.methods, http.MethodGet) && !slices.Contains(m.methods, http.MethodHead) {
		t.differs(where, "Kong's route of GET does not match HEAD; sluice's rule of GET matches HEAD too, so HEAD requests on its paths count against it.")
	}
	if len(r.Headers) > 0 {
		t.differs(where, "the route also matches headers, which the rule does not: requests on its paths, hosts and methods without them count too. Kong matches a header's listed values in any case (and one written ~* as a regular expression), which a rule's header match, of one value in one case, cannot say.")
	}
	return m
}

// kongRoutesMatch joins the matches of a plugin's routes: their paths,
// and the hosts and methods any of them matches (nil: any). Where the
// routes' hosts and methods joined with their paths are more than the
// routes (kongRouteGroups parts them), groups are the alternatives of the
// plugin's rule, each matching its routes' own hosts, paths and methods,
// one count across them as Kong counts the plugin's requests.
func (t *Translation) kongRoutesMatch(ms []kongMatch, where string) kongMatch {
	var out kongMatch
	for i, m := range ms {
		out.paths = append(out.paths, m.paths...)
		if i == 0 {
			out.hosts, out.methods = slices.Clone(m.hosts), slices.Clone(m.methods)
			continue
		}
		out.hosts, out.methods = unionOrAny(out.hosts, m.hosts), unionOrAny(out.methods, m.methods)
	}
	if gs := kongRouteGroups(ms); len(gs) > 1 {
		out.groups = gs
		t.same(where, "its routes match different hosts or methods: its rule has an alternative for each set of them (match: a list of %d), each matching its routes' own hosts, paths and methods, as Kong's routes do, and counts the plugin's requests on all of them together, as Kong does.", len(gs))
	}
	return out
}

// matches returns m's groups, or m as its one group.
func (m kongMatch) matches() []kongMatch {
	if len(m.groups) > 0 {
		return m.groups
	}
	return []kongMatch{m}
}

// unionOrAny joins two lists of which an empty one stands for anything.
func unionOrAny(a, b []string) []string {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	for _, v := range b {
		if !slices.Contains(a, v) {
			a = append(a, v)
		}
	}
	return a
}

// sameSet reports whether a and b hold the same values.
func sameSet(a, b []string) bool {
	return !slices.ContainsFunc(a, func(v string) bool { return !slices.Contains(b, v) }) &&
		!slices.ContainsFunc(b, func(v string) bool { return !slices.Contains(a, v) })
}

// covers reports whether the requests of hosts and methods include all of
// those of a rule matching ruleHosts and ruleMethods (empty lists: any).
func covers(hosts, methods, ruleHosts, ruleMethods []string) bool {
	in := func(outer, inner []string) bool {
		return len(outer) == 0 || len(inner) > 0 && !slices.ContainsFunc(inner, func(v string) bool { return !slices.Contains(outer, v) })
	}
	return in(hosts, ruleHosts) && in(methods, ruleMethods)
}

// disjoint reports whether no request matches both a's and b's hosts, or
// both their methods (empty lists: any). Hosts are compared as names; a
// wildcard is taken to meet every host.
func disjoint(aHosts, aMethods, bHosts, bMethods []string) bool {
	apart := func(a, b []string, wild bool) bool {
		if len(a) == 0 || len(b) == 0 {
			return false
		}
		if wild && (slices.ContainsFunc(a, func(h string) bool { return strings.HasPrefix(h, "*.") }) || slices.ContainsFunc(b, func(h string) bool { return strings.HasPrefix(h, "*.") })) {
			return false
		}
		return !slices.ContainsFunc(a, func(v string) bool { return slices.Contains(b, v) })
	}
	return apart(aHosts, bHosts, true) || apart(aMethods, bMethods, false)
}

// kongServiceScopes makes a global plugin with limit_by service one scope
// per service: Kong's identifier is the service of the request's route, so
// each service's routes count together, apart from every other service's.
// A service, or a route, with a plugin of the same name of its own runs that
// one instead; a route without a service counts by address, as Kong's
// identifier then falls back to it.
func (t *Translation) kongServiceScopes(g kongScope, services []kongService, loose []kongRoute) []kongScope {
	var out []kongScope
	for _, s := range services {
		if hasOwnPlugin(s.Plugins, g.config.advanced) {
			continue
		}
		where := fmt.Sprintf("%s for service %s", g.where, s.Name)
		var rs []kongRoute
		var rws []string
		for _, r := range s.Routes {
			if !hasOwnPlugin(r.Plugins, g.config.advanced) {
				rs, rws = append(rs, r), append(rws, where+" route "+r.Name)
			}
		}
		if len(rs) == 0 {
			continue
		}
		out = append(out, t.kongAuthScopes(kongScope{where: where, name: "global-" + s.Name, config: g.config}, rs, rws)...)
		t.same(where, "Kong counts a global plugin's limit_by service per service, the service of the request's route: a rule of the service's routes (those without a plugin of their own), one count for them all (key rule).")
	}
	for _, r := range loose {
		if hasOwnPlugin(r.Plugins, g.config.advanced) {
			continue
		}
		where := fmt.Sprintf("%s for route %s", g.where, r.Name)
		c := g.config
		c.LimitBy = "ip"
		out = append(out, t.kongAuthScopes(kongScope{where: where, name: "global-" + r.Name, config: c}, []kongRoute{r}, []string{where})...)
		t.same(where, "the route has no service, so Kong's limit_by service falls back to the client's address: the route's rule counts per address.")
	}
	if len(out) == 0 && len(services) == 0 && len(loose) == 0 {
		t.differs(g.where+" limit_by service", "Kong counts per service (the service of the request's route), and the file names no service or route: the import counts every request together, one global count. Import the file with its services and routes for a count per service.")
		return []kongScope{g}
	}
	return out
}

// hasOwnPlugin reports whether ps holds an enabled rate-limiting plugin
// (advanced: rate-limiting-advanced), which runs instead of a less
// specific one of the same name.
func hasOwnPlugin(ps []kongPlugin, advanced bool) bool {
	name := map[bool]string{false: "rate-limiting", true: "rate-limiting-advanced"}[advanced]
	return slices.ContainsFunc(ps, func(p kongPlugin) bool { return p.Name == name && (p.Enabled == nil || *p.Enabled) })
}
