package migrate

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/routes"
)

// envoyLocalMatch narrows r to the requests c applies to: its route's
// match and its virtual host's domains, leaving out the routes before it
// that take some of its requests (first match wins) and, for a wider
// configuration, the routes and virtual hosts with their own. It reports
// false, having said why, when sluice cannot match them.
func (t *Translation) envoyLocalMatch(r *Rule, c envoyLocalConfig, all []envoyLocalConfig, where string) bool {
	if c.vhost != nil {
		var hosts []string
		for _, d := range mapValue(c.vhost, "domains").Content {
			host := strings.ToLower(d.Value)
			if host == "*" {
				hosts = nil
				break
			}
			if !validHostName(host) {
				t.differs(where, "the virtual host's domain %q is not a host name sluice's rules match (no wildcards, no ports): the rule matches every host.", d.Value)
				hosts = nil
				break
			}
			hosts = append(hosts, host)
		}
		r.Hosts = hosts
		if slices.Contains(domainsOf(c.vhost), "*") {
			t.leaveOutOtherHosts(r, c.vhost, c.vhosts, where)
		}
	}
	// A "*" virtual host with a bucket of its own takes every host the
	// others do not name: the filter chain's bucket counts theirs alone.
	wildcard := c.route == nil && c.vhost == nil && chainOnOtherHosts(r, c, all)
	if c.route != nil {
		own, ok := t.routePatterns(c.route, r, where)
		if !ok {
			return false
		}
		r.Paths = own
		for _, before := range c.routes {
			if before == c.route {
				break
			}
			t.leaveOutEarlier(r, before, own, where)
		}
	}
	// Routes and virtual hosts below this configuration that have their
	// own replace it there.
	for _, o := range all {
		if o.cfg == c.cfg || mapValue(o.cfg, "token_bucket") == nil || wildcard && slices.Contains(domainsOf(o.vhost), "*") {
			continue
		}
		switch {
		case c.route == nil && c.vhost == nil && o.vhost != nil, c.route == nil && c.vhost != nil && o.vhost == c.vhost && o.route != nil:
			hosts, exact := exactDomains(o.vhost)
			if o.route == nil {
				if exact {
					r.Except = append(r.Except, RuleMatch{Hosts: hosts})
					continue
				}
				t.differs(where, "virtual host %s has a bucket of its own, which replaces this one there; sluice counts its requests in both. Add hosts to this rule's match to leave them out.", scalar(mapValue(o.vhost, "name")))
				continue
			}
			if c.vhost != nil || !exact {
				if ps, simple := plainPatterns(o.route); simple && len(ps) > 0 && r.leaveOut(ps, r.Paths) {
					if c.vhost == nil && !slices.Contains(domainsOf(o.vhost), "*") {
						t.differs(where, "route %s of virtual host %s has a bucket of its own; the rule leaves its paths out on every host, not only on %s.", routeName(o.route, o.routes), scalar(mapValue(o.vhost, "name")), strings.Join(domainsOf(o.vhost), ", "))
					} else if others, inexact := otherHosts(o.vhost, o.vhosts); c.vhost == nil && len(others)+len(inexact) > 0 {
						for _, v := range inexact {
							others = append(others, domainsOf(v)...)
						}
						t.differs(where, "route %s of virtual host %s has a bucket of its own; the rule leaves its paths out on every host, also on %s, which Envoy gives the other virtual hosts and this bucket.", routeName(o.route, o.routes), scalar(mapValue(o.vhost, "name")), strings.Join(others, ", "))
					}
					t.earlierTaken(o, where)
					continue
				}
			}
			if c.vhost != nil || exact {
				// On another virtual host, its domains; on this one, the
				// rule's hosts already are.
				if e, note, ok := routeExcept(o.route); ok && (c.vhost == nil || len(e.Paths)+len(e.Methods)+len(e.Headers) > 0) {
					if c.vhost == nil {
						e.Hosts = hosts
					}
					r.Except = append(r.Except, e)
					if note != "" {
						t.differs(where, "route %s has a bucket of its own, which this rule leaves out: its %s.", routeName(o.route, o.routes), note)
					}
					t.earlierTaken(o, where)
					continue
				}
			}
			t.differs(where, "route %s has a bucket of its own, which replaces this one there; sluice cannot leave its requests out of this rule: both count them.", routeName(o.route, o.routes))
		}
	}
	return true
}

// leaveOutOtherHosts leaves out of r, the rule of a configuration of the
// "*" virtual host vhost, the domains of the other virtual hosts of its
// route configuration (vhosts): Envoy gives their requests to them. It
// says so where sluice cannot (a wildcard or a port in a domain).
func (t *Translation) leaveOutOtherHosts(r *Rule, vhost *yaml.Node, vhosts []*yaml.Node, where string) {
	hosts, inexact := otherHosts(vhost, vhosts)
	for _, v := range inexact {
		t.differs(where, "virtual host %s takes its domains (%s) before the \"*\" one, and sluice cannot leave them out of this rule (a wildcard or a port): it counts their requests too.", scalar(mapValue(v, "name")), strings.Join(domainsOf(v), ", "))
	}
	if len(hosts) > 0 {
		r.Except = append(r.Except, RuleMatch{Hosts: hosts})
	}
}

// chainOnOtherHosts restricts r, the filter chain's rule of c, to the
// hosts of the virtual hosts beside a "*" one that has a bucket of its own
// (which replaces the chain's on every other host), and reports whether it
// did. It does not when a domain of theirs has a wildcard or a port, or
// there is no other virtual host: envoyLocalMatch then says both count.
func chainOnOtherHosts(r *Rule, c envoyLocalConfig, all []envoyLocalConfig) bool {
	for _, o := range all {
		if o.cfg == c.cfg || o.route != nil || o.vhost == nil || mapValue(o.cfg, "token_bucket") == nil || !slices.Contains(domainsOf(o.vhost), "*") {
			continue
		}
		hosts, inexact := otherHosts(o.vhost, o.vhosts)
		if len(hosts) == 0 || len(inexact) > 0 {
			return false
		}
		r.Hosts = hosts
		return true
	}
	return false
}

// otherHosts returns the domains, in lower case, of the virtual hosts of
// vhosts other than vhost whose domains are all exact host names
// (exactDomains), and the others.
func otherHosts(vhost *yaml.Node, vhosts []*yaml.Node) (hosts []string, inexact []*yaml.Node) {
	for _, v := range vhosts {
		if v == vhost {
			continue
		}
		if ds, exact := exactDomains(v); exact {
			hosts = append(hosts, ds...)
		} else {
			inexact = append(inexact, v)
		}
	}
	return hosts, inexact
}

// leaveOutEarlier leaves before, a route listed before the one of r's
// configuration in its virtual host (own: that route's patterns), out of
// r: Envoy gives it the requests both match (first match wins). A route of
// paths alone is left out by except_paths where they can; another, or one
// whose path is r's, by an except entry of its paths, methods and
// headers. It says so when sluice cannot.
func (t *Translation) leaveOutEarlier(r *Rule, before *yaml.Node, own []string, where string) {
	if ps, simple := plainPatterns(before); simple {
		if len(ps) == 0 {
			return // every path: the route is never reached
		}
		below := belowAny(ps, own)
		if len(below) == len(overlapping(ps, own)) && r.leaveOut(below, own) {
			return
		}
	}
	e, note, ok := routeExcept(before)
	if !ok {
		t.differs(where, "an earlier route of the virtual host takes some of these requests (first match wins), and sluice cannot leave it out here: both count them.")
		return
	}
	if len(e.Paths) > 0 {
		if e.Paths = overlapping(e.Paths, own); len(e.Paths) == 0 {
			return // none of these requests
		}
	}
	if len(e.Paths)+len(e.Methods)+len(e.Headers) == 0 {
		return // every request: the route is never reached
	}
	r.Except = append(r.Except, e)
	if note != "" {
		t.differs(where, "an earlier route of the virtual host takes some of these requests (first match wins), which the rule leaves out: its %s.", note)
	}
}

// earlierTaken says where a route before o's, in its virtual host, may
// take some requests of o's match first: Envoy limits those by the
// configuration of where, which leaves o's requests out with them.
func (t *Translation) earlierTaken(o envoyLocalConfig, where string) {
	e, _, ok := routeExcept(o.route)
	for _, before := range o.routes {
		if before == o.route {
			return
		}
		b, _, bok := routeExcept(before)
		if ok && bok && len(e.Paths) > 0 && len(b.Paths) > 0 && len(overlapping(b.Paths, e.Paths)) == 0 {
			continue
		}
		t.differs(where, "route %s comes before route %s, which has a bucket of its own, and may take some of its requests (first match wins), which Envoy counts here; the rule leaves them out with route %s's.",
			routeName(before, o.routes), routeName(o.route, o.routes), routeName(o.route, o.routes))
		return
	}
}

// routeExcept returns the requests of route's match as an except entry:
// its paths, the methods of its :method matchers, its headers' presence
// or exact values; note says what it matches that the entry does not (a
// prefix not ending in a slash also takes "/apix"). It reports false for
// a match sluice cannot leave out exactly or by less: a regular
// expression, query parameters, another kind of header matcher, paths in
// any case.
func routeExcept(route *yaml.Node) (e RuleMatch, note string, ok bool) {
	m := mapValue(route, "match")
	if m == nil || m.Kind != yaml.MappingNode {
		return e, "", false
	}
	plain := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k := m.Content[i].Value; k {
		case "prefix", "path", "path_separated_prefix":
			plain.Content = append(plain.Content, m.Content[i], m.Content[i+1])
		case "headers":
		case "case_sensitive":
			if m.Content[i+1].Value == "false" {
				return e, "", false
			}
		default:
			return e, "", false
		}
	}
	if hs := mapValue(m, "headers"); hs != nil {
		for _, h := range hs.Content {
			if v := mapValue(h, "invert_match"); v != nil && v.Value == "true" {
				return e, "", false
			}
			name := scalar(mapValue(h, "name"))
			value, exact := headerExact(h)
			switch {
			case !exact:
				return e, "", false
			case strings.EqualFold(name, ":method"):
				if value != "" {
					e.Methods = append(e.Methods, value)
				}
			case !validHeaderName(name) || strings.HasPrefix(name, ":") || !printable(value):
				return e, "", false
			default:
				e.Headers = append(e.Headers, HeaderMatch{Name: http.CanonicalHeaderKey(name), Value: value})
			}
		}
	}
	var scratch Translation
	var sr Rule
	ps, ok := scratch.routePatterns(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "match"}, plain}}, &sr, "")
	if !ok {
		return e, "", false
	}
	e.Paths = ps
	if p := scalar(mapValue(m, "prefix")); p != "" && p != "/" && !strings.HasSuffix(p, "/") {
		note = fmt.Sprintf("prefix %s also takes paths such as %sx, which the rule still counts", p, p)
	}
	return e, note, true
}

// overlapping returns the patterns of ps that some path of own may match
// too (routes.PathsOverlap); all of ps when own is empty (every path).
func overlapping(ps, own []string) []string {
	if len(own) == 0 {
		return ps
	}
	var out []string
	for _, p := range ps {
		if slices.ContainsFunc(own, func(o string) bool { return routes.PathsOverlap(p, o) }) {
			out = append(out, p)
		}
	}
	return out
}

// exactDomains returns a virtual host's domains, in lower case, and
// whether each is a host name that sluice matches as Envoy does: no
// wildcard (Envoy gives a name under "*.example.com" to a virtual host of
// that very name first), no port.
func exactDomains(vhost *yaml.Node) ([]string, bool) {
	var hosts []string
	for _, d := range domainsOf(vhost) {
		h := strings.ToLower(d)
		if !validHostName(h) {
			return nil, false
		}
		hosts = append(hosts, h)
	}
	return hosts, len(hosts) > 0
}

// plainPatterns returns the ServeMux patterns of a route matched by path
// alone, and whether it is so matched.
func plainPatterns(route *yaml.Node) ([]string, bool) {
	m := mapValue(route, "match")
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "prefix", "path", "path_separated_prefix", "case_sensitive":
		default:
			return nil, false // headers, query parameters, a fraction, gRPC, TLS…
		}
	}
	var scratch Translation
	var r Rule
	ps, ok := scratch.routePatterns(route, &r, "")
	return ps, ok && len(r.Headers) == 0
}

// routePatterns returns the ServeMux patterns of a route's match (nil:
// every path) and adds its header matchers to r; false, having said why,
// for a match sluice cannot express.
func (t *Translation) routePatterns(route *yaml.Node, r *Rule, where string) ([]string, bool) {
	m := mapValue(route, "match")
	if k := otherMatcher(m); k != "" {
		t.differs(where, "not imported: the route also matches by %s, which sluice's rules cannot say (Envoy gives the route only the requests it matches).", k)
		return nil, false
	}
	var patterns []string
	switch {
	case mapValue(m, "prefix") != nil:
		p := scalar(mapValue(m, "prefix"))
		switch {
		case p == "/" || p == "":
		case !validPathValue(p):
			t.differs(where, "not imported: prefix %q is not a path sluice matches.", p)
			return nil, false
		default:
			patterns = prefixPatterns(p)
			if !strings.HasSuffix(p, "/") {
				t.differs(where+" path", "prefix %s also matches paths such as %sx; sluice's rule matches %s and the paths below %s/.", p, p, p, p)
			}
		}
	case mapValue(m, "path") != nil || mapValue(m, "path_separated_prefix") != nil:
		p := scalar(mapValue(m, "path"))
		sep := p == ""
		if sep {
			p = scalar(mapValue(m, "path_separated_prefix"))
		}
		if !validPathValue(p) {
			t.differs(where, "not imported: path %q is not a path sluice matches.", p)
			return nil, false
		}
		if sep {
			patterns = prefixPatterns(p)
		} else {
			patterns = []string{exactPattern(p)}
		}
	default:
		t.differs(where, "not imported: the route matches by a regular expression or a template; sluice's rules match paths and prefixes.")
		return nil, false
	}
	if cs := mapValue(m, "case_sensitive"); cs != nil && cs.Value == "false" {
		t.differs(where+" path", "the route matches paths in any case; sluice's rule matches them as written.")
	}
	if hs := mapValue(m, "headers"); hs != nil {
		for _, h := range hs.Content {
			name := scalar(mapValue(h, "name"))
			value, ok := headerExact(h)
			if v := mapValue(h, "invert_match"); v != nil && v.Value == "true" {
				// The route takes the requests the matcher does not match:
				// the rule leaves out those it does.
				if !validHeaderName(name) || !ok || !printable(value) {
					t.differs(where, "not imported: the route's inverted header matcher on %q is not a header's presence or exact value.", name)
					return nil, false
				}
				r.Except = append(r.Except, RuleMatch{Headers: []HeaderMatch{{Name: http.CanonicalHeaderKey(name), Value: value}}})
				continue
			}
			if strings.EqualFold(name, ":method") && ok {
				if !t.routeMethod(r, value, where) {
					return nil, false
				}
				continue
			}
			if !validHeaderName(name) || strings.HasPrefix(name, ":") || !ok || !printable(value) {
				t.differs(where, "not imported: the route's header matcher on %q is not a header's presence or exact value.", name)
				return nil, false
			}
			r.Headers = append(r.Headers, HeaderMatch{Name: http.CanonicalHeaderKey(name), Value: value})
		}
	}
	if mapValue(m, "query_parameters") != nil {
		t.differs(where, "the route also matches query parameters; sluice's rule matches the path alone.")
	}
	return patterns, true
}

// otherMatcher returns the first key of route match m that selects
// requests by something else than their path, headers and query
// parameters (runtime_fraction, grpc, tls_context, dynamic_metadata,
// filter_state, cel…); "" for none.
func otherMatcher(m *yaml.Node) string {
	if m == nil || m.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i < len(m.Content); i += 2 {
		switch k := m.Content[i].Value; k {
		case "prefix", "path", "path_separated_prefix", "safe_regex", "regex", "path_match_policy", "connect_matcher",
			"headers", "query_parameters", "case_sensitive":
		default:
			return k
		}
	}
	return ""
}

// routeMethod makes r, a route's rule, match method, the exact value of
// the route's :method matcher ("" for its presence, which every request
// has); false, having said why, for a method a rule cannot match exactly
// (a standard method in another case, a second method: two :method
// matchers match nothing). A rule's GET matches HEAD too, which Envoy's
// exact GET does not: the rule leaves HEAD out.
func (t *Translation) routeMethod(r *Rule, method, where string) bool {
	_, otherCase := routes.MethodInOtherCase(method)
	switch {
	case method == "":
		return true
	case !validHeaderName(method) || otherCase:
		t.differs(where, "not imported: the route matches :method %q, not a method sluice's rules match as written.", method)
		return false
	case len(r.Methods) > 0:
		t.differs(where, "not imported: the route matches :method %q and %q, both exactly.", r.Methods[0], method)
		return false
	}
	r.Methods = []string{method}
	if method == http.MethodGet {
		r.Except = append(r.Except, RuleMatch{Methods: []string{http.MethodHead}})
	}
	return true
}

// headerExact reads a route's header matcher: its exact value, or "" for
// presence; false for another kind of match.
func headerExact(h *yaml.Node) (string, bool) {
	if v := mapValue(h, "exact_match"); v != nil {
		return scalar(v), scalar(v) != ""
	}
	if sm := mapValue(h, "string_match"); sm != nil {
		if v := mapValue(sm, "exact"); v != nil && len(sm.Content) == 2 {
			return scalar(v), scalar(v) != ""
		}
		return "", false
	}
	if v := mapValue(h, "present_match"); v != nil && v.Value == "true" {
		return "", true
	}
	return "", false
}

// domainsOf lists a virtual host's domains.
func domainsOf(vhost *yaml.Node) []string {
	var out []string
	if d := mapValue(vhost, "domains"); d != nil {
		for _, n := range d.Content {
			out = append(out, n.Value)
		}
	}
	return out
}
