package migrate

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// kongRules makes a rule of each plugin when the plugins differ: it
// matches the plugin's routes (every path for a global plugin), counts as
// its limit_by says, and charges the request's cost, which is 1 on every
// limited route and 0 elsewhere. Kong runs one rate-limiting plugin per
// request, the most specific (route, then service, then global), so the
// service's and the global plugin's rules leave out the routes with a
// plugin of their own name (allPaths are every route's paths). The rule of
// a plugin of some routes leaves out the paths Kong's router gives to the
// other routes (all, numbered by kongRoute.at), whatever plugins they have
// (kongLeaveOutRivals). The policy, error code and headers are the first
// plugin's. The names of the rules of rate-limiting-advanced plugins are
// set in advanced, those of namedOnly scopes (kongAuthScopes) in named.
func (t *Translation) kongRules(scopes []kongScope, allPaths []string, all []kongRoute, advanced, named map[string]bool) error {
	everywhere := false
	for _, s := range scopes {
		if s.paths == nil {
			everywhere = true
		}
	}
	if !everywhere {
		t.Costs["/"] = 0
		t.same("routes", "the plugins limit only their routes: other paths cost 0 and the routes' path prefixes cost 1.")
	}
	ruleAt := make([]int, len(scopes)) // index in t.SluiceRules, -1: none
	for i, s := range scopes {
		ruleAt[i] = -1
		if !everywhere {
			t.kongRouteCosts(s.paths)
		}
		alts := kongAlternatives(s)
		if len(alts) == 0 {
			continue // only regular expressions: reported above
		}
		r := Rule{Name: t.ruleName(s.name)}
		if len(alts) == 1 {
			r.Paths, r.Hosts, r.Methods = alts[0].Paths, alts[0].Hosts, alts[0].Methods
		} else {
			for _, a := range alts {
				r.Any = append(r.Any, a.RuleMatch)
			}
		}
		if err := t.kongRuleKey(s, &r); err != nil {
			return err
		}
		ls, err := t.kongPeriods(s, func(name string) string { return name })
		if err != nil {
			return err
		}
		r.Limits, r.everyPlan = ls, s.unauth
		ruleAt[i] = len(t.SluiceRules)
		t.SluiceRules = append(t.SluiceRules, r)
		if s.config.LimitBy == "path" {
			if err := t.kongPathRule(s, ruleAt[i]); err != nil {
				return err
			}
		}
		for _, q := range t.SluiceRules[ruleAt[i]:] {
			advanced[q.Name] = s.config.advanced
			if s.namedOnly {
				named[q.Name] = true
			}
		}
	}
	// The rivals of a plugin's rule are the routes no plugin of its name
	// runs on as a route's or a service's: the others are weighed below.
	covered := map[bool]map[int]bool{false: {}, true: {}} // by advanced, the numbers of those routes
	for _, s := range scopes {
		if s.paths != nil {
			for _, at := range s.routes {
				covered[s.config.advanced][at] = true
			}
		}
	}
	places := kongRivals(all, func(int) bool { return false })
	var ties kongTies
	byPath := map[string][]int{} // the numbers of the routes of each Kong path
	for _, p := range places {
		for _, q := range p.match.paths {
			byPath[q] = append(byPath[q], p.route.at)
		}
	}
	for i, s := range scopes {
		if ruleAt[i] < 0 {
			continue
		}
		r := &t.SluiceRules[ruleAt[i]]
		var global []string    // the global plugin's: the patterns of the routes it runs on
		var ownRoutes []string // the global plugin's: the Kong paths of the routes it runs on
		if s.paths == nil {    // the global plugin's: the routes no other plugin covers
			for _, p := range allPaths {
				if !slices.ContainsFunc(scopes, func(o kongScope) bool { return o.config.advanced == s.config.advanced && slices.Contains(o.paths, p) }) {
					global, ownRoutes = append(global, kongPathPatterns(p)...), append(ownRoutes, p)
				}
			}
		}
		// Each match of the rule (an alternative, or its own) meets each
		// of another plugin's; a report made twice is made once.
		said := map[Difference]bool{}
		say := func(same bool, where, format string, args ...any) {
			if d := (Difference{Where: where, Same: same, Text: fmt.Sprintf(format, args...)}); !said[d] {
				said[d] = true
				t.Differences = append(t.Differences, d)
			}
		}
		alts := kongAlternatives(s)
		// Kong's router picks a route by specificity, not by the order of
		// the file: the rule is weighed against every other plugin's
		// routes, before and after it. Of two routes of the same path, the
		// one of more priority points takes the requests both match, and of
		// the same hosts and methods, the one kongTies.takenBy says.
		for j, o := range scopes {
			// A plugin gives way only to a more specific one of its own
			// name: rate-limiting and rate-limiting-advanced both run.
			// The parts of a plugin for the plans with and without a
			// consumer's plugin of its name (namedOnly) share routes.
			if j == i || o.config.advanced != s.config.advanced || o.paths == nil || s.sibling != "" && o.sibling == s.sibling && (s.namedOnly || o.namedOnly) {
				continue
			}
			for k, a := range alts {
				alt, own := k, a.Paths
				if len(r.Any) == 0 {
					alt = -1
				}
				if s.paths == nil {
					own = global
				}
				for _, om := range o.match().matches() {
					// takes reports whether o's routes take the requests on
					// their path q, which is also one of a's routes'; tie, that
					// some are of the same hosts and methods (reported with
					// ties).
					tie := false
					takes := func(q string) bool {
						switch pa, po := kongPoints(a.route.hosts, a.route.methods), kongPoints(om.hosts, om.methods); {
						case po != pa:
							return po > pa
						case sameSet(om.hosts, a.route.hosts) && sameSet(om.methods, a.route.methods):
							mine, theirs := kongTied(places, s.routes, q, a.route.hosts, a.route.methods), kongTied(places, o.routes, q, om.hosts, om.methods)
							if len(mine) > 0 && len(theirs) > 0 {
								tie = true
								return ties.takenBy(mine, theirs, q, om.hosts, om.methods)
							}
						}
						return j > i
					}
					if s.paths != nil && !slices.ContainsFunc(om.paths, func(q string) bool {
						return slices.ContainsFunc(a.route.paths, func(p string) bool { return q == p && takes(q) || below(q, strings.TrimSuffix(p, "/")+"/") })
					}) || disjoint(om.hosts, om.methods, a.Hosts, a.Methods) {
						continue
					}
					paths := om.paths
					if s.paths == nil {
						// The global plugin's rule keeps the paths of o's routes
						// that a route of the same path, hosts and methods
						// without a plugin of its name takes.
						paths = slices.DeleteFunc(slices.Clone(om.paths), func(q string) bool {
							free := slices.DeleteFunc(slices.Clone(byPath[q]), func(at int) bool { return covered[s.config.advanced][at] })
							mine, theirs := kongTied(places, free, q, om.hosts, om.methods), kongTied(places, o.routes, q, om.hosts, om.methods)
							return len(mine) > 0 && len(theirs) > 0 && !ties.takenBy(mine, theirs, q, om.hosts, om.methods)
						})
						if len(paths) == 0 {
							continue
						}
					}
					// Kong's router prefers the route that matches more of a
					// request (its hosts, its methods) where both match it:
					// where that is s's (more priority points), s's rule keeps
					// those requests and o's leaves them out, by an except
					// entry of its paths on s's hosts and methods.
					outranks := s.paths != nil && kongPoints(a.route.hosts, a.route.methods) > kongPoints(om.hosts, om.methods)
					if outranks || s.route && o.route && !atLeastAsSpecific(o, s) {
						if outranks && ruleAt[j] >= 0 && !slices.ContainsFunc(s.routes, func(at int) bool { return at < 0 || at >= len(places) || !kongPlain(places[at].route) }) {
							ro := &t.SluiceRules[ruleAt[j]]
							var pats []string
							for _, q := range om.paths {
								for _, pat := range kongPathPatterns(q) {
									if slices.ContainsFunc(a.Paths, func(p string) bool { return p == pat || below(pat, p) }) {
										pats = append(pats, pat)
									}
								}
							}
							if alt := kongAltOf(ro, om); alt >= -1 && ro.kongExcept(alt, pats, a.Hosts, a.Methods, nil, true) {
								if s.route {
									say(true, o.where, "Kong's router gives route %s the requests that both it and this route match, as it matches by more of a request (hosts, methods): this plugin's rule leaves them out (except: its paths on that route's hosts and methods).", s.name)
								} else {
									say(true, o.where, "Kong's router gives the routes of the %s the requests that both they and this plugin's routes match, as they match by more of a request (hosts, methods): this plugin's rule leaves them out (except: its paths on those routes' hosts and methods).", s.where)
								}
								continue
							}
						}
						if s.route && o.route {
							say(false, o.where, "Kong's router gives a request that both this route and route %s match to one of them; sluice's rules of both match it, and both count it.", s.name)
						} else {
							say(false, o.where, "Kong's router gives the routes of the %s the requests on this plugin's paths of their hosts or methods, as they match by more of a request; sluice's rules of both match them, and both count them.", s.where)
						}
						continue
					}
					if !covers(om.hosts, om.methods, a.Hosts, a.Methods) {
						if s.paths != nil || kongTakenBy(ownRoutes, om.paths) {
							// Kong gives o's routes the requests on their paths of
							// their own hosts and methods: an except entry says
							// them, where o's routes match by no header.
							var theirs []string
							for _, p := range paths {
								theirs = append(theirs, kongPathPatterns(p)...)
							}
							theirs = overlapping(theirs, a.Paths)
							plain := !slices.ContainsFunc(o.routes, func(at int) bool { return at < 0 || at >= len(places) || !kongPlain(places[at].route) })
							if plain && r.kongExcept(alt, theirs, om.hosts, om.methods, own, kongPoints(om.hosts, om.methods) > kongPoints(a.route.hosts, a.route.methods)) {
								say(true, o.where, "Kong's router gives its routes the requests on their paths of their own hosts or methods, and runs the most specific rate-limiting plugin there; the rule of the %s leaves those requests out (except: their paths on their hosts and methods), and counts the others on those paths.", s.where)
								continue
							}
							say(false, o.where, "Kong routes a request to one route, and runs the most specific rate-limiting plugin there; the rule of the %s also matches this plugin's paths on hosts or methods other than its routes', and leaving the paths out (except_paths) would leave those out too: its requests also count against that rule.", s.where)
							continue
						}
						say(true, o.where, "requests on its paths of other hosts or methods than its routes' match no route the %s runs on: Kong answers them 404 before any plugin, so the rule of the %s may leave the paths out on every host and method.", s.where, s.where)
					}
					var theirs []string
					for _, p := range paths {
						theirs = append(theirs, kongPathPatterns(p)...)
					}
					if r.leaveOutAt(alt, theirs, own) {
						if tie {
							continue
						}
						say(true, o.where, "Kong runs only the most specific rate-limiting plugin on its routes; the rule of the %s leaves them out (except_paths).", s.where)
					} else {
						say(false, o.where, "Kong runs only the most specific rate-limiting plugin on its routes; the rule of the %s matches them too, and cannot leave them out (except_paths) without leaving out a route below them that it covers: their requests also count against it.", s.where)
					}
				}
			}
		}
	}
	rivals := map[bool][]kongPlace{}
	for i, s := range scopes {
		if ruleAt[i] < 0 || s.paths == nil {
			continue
		}
		adv := s.config.advanced
		if _, ok := rivals[adv]; !ok {
			rivals[adv] = kongRivals(all, func(at int) bool { return covered[adv][at] })
		}
		t.kongLeaveOutRivals(ruleAt[i], t.kongUntied(ruleAt[i], s, rivals[adv], places, &ties), s.where)
	}
	ties.report(t)
	for i, s := range scopes {
		if at := ruleAt[i]; at >= 0 && slices.ContainsFunc(t.SluiceRules[at].Except, func(e RuleMatch) bool { return len(e.Hosts) > 0 }) {
			t.differs(s.where, "its rule leaves out requests of other routes on their hosts (except:) only where the Host header is the name alone: Kong's router gives such a route a.example:8080 and a.example. too, which the rule counts.")
		}
	}
	t.kongLeaveOutSiblings(scopes, ruleAt)
	t.kongSettings(scopes[0].config)
	for _, s := range scopes[1:] {
		c, m := s.config, scopes[0].config
		if c.Policy != m.Policy || !reflect.DeepEqual(c.FaultTolerant, m.FaultTolerant) || !reflect.DeepEqual(c.ErrorCode, m.ErrorCode) || c.HideClientHeaders != m.HideClientHeaders {
			t.differs(s.where, "its policy, fault_tolerant, error_code or hide_client_headers differ from the %s's: sluice has one store and one answer for all rules, set from the %s.", scopes[0].where, scopes[0].where)
		}
	}
	return nil
}

// kongAlt is a match of the rule of a plugin (an alternative of it, or
// its own), and the Kong paths, hosts and methods of the routes it was
// made of.
type kongAlt struct {
	RuleMatch
	route kongMatch
}

// kongAlternatives returns the matches of the rule of s's plugin: one of
// s's routes, or one per group of them (s.groups), each of the ServeMux
// patterns of its paths (none, every path, for a global plugin's). A group
// of regular-expression paths only, which a rule cannot match, has none.
func kongAlternatives(s kongScope) []kongAlt {
	var out []kongAlt
	for _, g := range s.match().matches() {
		a := kongAlt{RuleMatch{Hosts: g.hosts, Methods: g.methods}, g}
		for _, p := range g.paths {
			for _, pat := range kongPathPatterns(p) {
				if !slices.Contains(a.Paths, pat) {
					a.Paths = append(a.Paths, pat)
				}
			}
		}
		if s.paths != nil && len(a.Paths) == 0 {
			continue
		}
		out = append(out, a)
	}
	return out
}

// match returns what s's routes match: their paths, hosts and methods,
// and their groups.
func (s kongScope) match() kongMatch {
	return kongMatch{paths: s.paths, hosts: s.hosts, methods: s.methods, groups: s.groups}
}

// kongTakenBy reports whether a route of Kong path routes (string
// prefixes, or regular expressions) may take a request on one of paths,
// where those of another host or method than paths' routes go: a
// regular expression may match any path, a prefix the paths it starts.
func kongTakenBy(routes, paths []string) bool {
	return slices.ContainsFunc(routes, func(p string) bool {
		return !strings.HasPrefix(p, "/") || slices.ContainsFunc(paths, func(q string) bool { return strings.HasPrefix(q, p) || !strings.HasPrefix(q, "/") })
	})
}

// atLeastAsSpecific reports whether route scope o matches by every
// attribute (hosts, methods) that route scope s matches by.
func atLeastAsSpecific(o, s kongScope) bool {
	return (len(s.hosts) == 0 || len(o.hosts) > 0) && (len(s.methods) == 0 || len(o.methods) > 0)
}

// kongRuleKey sets the key of r, the rule of the plugin of s, as its
// limit_by counts.
func (t *Translation) kongRuleKey(s kongScope, r *Rule) error {
	c := s.config
	where := s.where + " limit_by " + or(c.LimitBy, "consumer")
	switch c.LimitBy {
	case "", "consumer", "credential":
		if t.kongAnonymous {
			r.Key = []string{"ip/32/128"}
			t.same(where, kongAnonymousSame+" (key ip/32/128).")
			break
		}
		if s.unauth {
			r.Key = []string{"ip/32/128"}
			t.same(where, "no authentication plugin runs on these routes, so Kong names no consumer there and counts every request by its address (its fallback), whatever key it carries; so does the rule (key ip/32/128).")
			break
		}
		t.APIKeyHeaders, t.IPv6Prefix = t.kongKeyHeaders(), 128
		r.Key = []string{"api_key"}
		t.same(where, "Kong counts per consumer, falling back to the whole address without one; for a consumer named by an API key or a Bearer token, the rule counts per API key (key-auth's %s header, or a Bearer token), falling back to the address (key api_key, fallback ip; ipv6_prefix: 128, the whole IPv6 address).", strings.Join(t.APIKeyHeaders[:len(t.APIKeyHeaders)-1], " or "))
	case "ip":
		r.Key = []string{"ip/32/128"}
		t.same(where, "one count per client address (key ip/32/128: IPv6 addresses whole).")
	case "header":
		if !validHeaderName(c.HeaderName) {
			return fmt.Errorf("%s: limit_by header: header_name %q is not a header name", s.where, c.HeaderName)
		}
		h := http.CanonicalHeaderKey(c.HeaderName)
		r.Key, r.HeaderFrom, t.IPv6Prefix = []string{"header:" + h}, "any", 128
		t.same(where, "one count per value of %s, whoever sends it (header_from: any); without it both count by the whole address (fallback ip; ipv6_prefix: 128).", h)
	case "service":
		r.Key = []string{"rule"}
		t.same(where, "one count for everything the plugin covers (key rule).")
	case "path":
		r.Key = []string{"ip/32/128"}
		t.same(where, "requests on any other path than %s count per client address, as Kong falls back to it (key ip/32/128).", c.Path)
	default:
		r.Key = []string{"ip/32/128"}
		t.differs(where, "not translatable: the rule counts per client address.")
	}
	return nil
}

// kongPathRule adds the second rule of a plugin with limit_by path, whose
// first is t.SluiceRules[at]: Kong counts the requests on exactly its
// config.path together (one count, key rule), and the others per address
// (the first rule, which leaves that path out). The second rule matches
// the path on the hosts and methods of the first's routes (of each
// alternative that reaches it), which are all Kong's router gives them,
// for the clients of the plans the first counts.
func (t *Translation) kongPathRule(s kongScope, at int) error {
	p := s.config.Path
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%s: limit_by path: path %q must start with /", s.where, p)
	}
	pattern := p
	if strings.HasSuffix(p, "/") {
		pattern += "{$}"
	}
	if !validPattern(pattern) {
		return fmt.Errorf("%s: limit_by path: path %q cannot be a ServeMux pattern", s.where, p)
	}
	r := &t.SluiceRules[at]
	q := Rule{Name: t.ruleName(r.Name + "-path"), Paths: []string{pattern}, Key: []string{"rule"}, Limits: slices.Clone(r.Limits), everyPlan: r.everyPlan}
	switch {
	case len(r.Any) > 0:
		// The path on the hosts and methods of each alternative that
		// reaches it.
		var alts []RuleMatch
		for k := range r.Any {
			if a := &r.Any[k]; matchesAny(a.Paths, p) {
				a.ExceptPaths = append(a.ExceptPaths, pattern)
				alts = append(alts, RuleMatch{Paths: []string{pattern}, Hosts: a.Hosts, Methods: a.Methods})
			}
		}
		switch len(alts) {
		case 0:
			t.differs(s.where+" limit_by path", "its path %s is on none of its routes: no request is counted by path.", p)
			return nil
		case 1:
			q.Hosts, q.Methods = alts[0].Hosts, alts[0].Methods
		default:
			q.Paths, q.Any = nil, alts
		}
	case r.Paths != nil && !matchesAny(r.Paths, p):
		t.differs(s.where+" limit_by path", "its path %s is on none of its routes: no request is counted by path.", p)
		return nil
	default:
		// The path on the rule's hosts and methods, those of the routes.
		r.ExceptPaths = append(r.ExceptPaths, pattern)
		q.Hosts, q.Methods = slices.Clone(r.Hosts), slices.Clone(r.Methods)
	}
	t.SluiceRules = append(t.SluiceRules, q)
	t.same(s.where+" limit_by path", "requests on exactly %s count together, as Kong counts them by path: a rule of that path alone (key rule), which the address rule leaves out (except_paths).", p)
	return nil
}

// matchesAny reports whether ServeMux routes path to one of patterns.
func matchesAny(patterns []string, path string) bool {
	mux := http.NewServeMux()
	for i, p := range patterns {
		if !slices.Contains(patterns[:i], p) {
			mux.Handle(p, http.NotFoundHandler())
		}
	}
	_, matched := mux.Handler(&http.Request{Method: "GET", URL: &url.URL{Path: path}, Host: "x"})
	return matched != ""
}

// kongPathPatterns returns the ServeMux patterns of a Kong route path, a
// prefix; for a regular expression of a literal path ending the match
// ("~/orders$", as the Kong Ingress Controller writes an Exact path), which
// Kong anchors at the path's start, the pattern of that path alone; none
// for another regular expression ("~…"), a path with "*" (which sluice
// refuses as a glob) or a path that is not one (reported where the
// route's costs are set).
func kongPathPatterns(p string) []string {
	if lit, ok := kongExactPath(p); ok {
		if pat := exactPattern(lit); validPattern(pat) {
			return []string{pat}
		}
		return nil
	}
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, "*") {
		return nil // "*" in a segment: sluice refuses the pattern as a glob
	}
	return prefixPatterns(p)
}

// kongExactPath returns the path that Kong route path p, a regular
// expression "~/…$" of letters, digits, slashes, hyphens and underscores
// only (no character a regular expression reads otherwise), matches alone.
func kongExactPath(p string) (string, bool) {
	lit, ok := strings.CutPrefix(p, "~")
	if lit, ok = strings.CutSuffix(lit, "$"); !ok || !strings.HasPrefix(lit, "/") {
		return "", false
	}
	return lit, strings.Trim(lit, "/-_"+alnum) == ""
}

// kongAltOf returns the index of r's alternative of route match m (of the
// same hosts and methods), -1 for r's own match when r has no
// alternatives, -2 for none.
func kongAltOf(r *Rule, m kongMatch) int {
	if len(r.Any) == 0 {
		return -1
	}
	for k, a := range r.Any {
		if sameSet(a.Hosts, m.hosts) && sameSet(a.Methods, m.methods) {
			return k
		}
	}
	return -2
}
