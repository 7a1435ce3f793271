package migrate

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// traefikRouter is a router (or an IngressRoute's route) and the
// middlewares it names.
type traefikRouter struct {
	name, rule string
	// refs are the middlewares it names, as written; middlewares their
	// keys (traefikRead.resolve), chains expanded, and unknown those the
	// file does not define.
	refs                 []traefikRef
	middlewares, unknown []string
	// priority decides which of the routers matching a request takes it,
	// the highest (traefikPriority).
	priority int
	// entryPoints are the entry points it serves (nil: every one).
	entryPoints []string
}

// traefikPriority is a router's priority: the one it sets, else the
// length of its rule, as Traefik takes it (0 is no priority set).
func traefikPriority(set int, rule string) int {
	if set != 0 {
		return set
	}
	return len(rule)
}

// traefikUse is a limiting middleware on a router (nil: on every request,
// for a file without routers), with the router's hosts and paths.
type traefikUse struct {
	router *traefikRouter
	traefikMatcher
	traefikMiddleware
	everywhere, matchable bool
	// scopes, when set, are the uses of the routers naming a middleware
	// whose buckets Traefik's Redis storage shares (traefikShared), joined
	// by hosts, methods and headers: one alternative of the rule each
	// when they are several, else the rule's one match. Each scope's
	// routers are its parts.
	scopes []traefikUse
	parts  []traefikUse
	rule   int // index in t.SluiceRules; -1: none
}

// traefikShared merges the uses of the middleware key, whose buckets
// Traefik keeps in Redis (one set for every router naming it), into one
// use, one rule of one count: the routers of the same hosts, methods and
// headers are a scope on the union of their paths, and the scopes, when
// they are several, are the rule's alternatives. A router whose rule
// cannot be read makes the rule match every request.
func (t *Translation) traefikShared(key string, uses []traefikUse) []traefikUse {
	var mine []traefikUse
	rest := uses[:0:0]
	for _, u := range uses {
		if u.key == key {
			mine = append(mine, u)
		} else {
			rest = append(rest, u)
		}
	}
	if len(mine) == 0 {
		return uses // no router names it
	}
	if t.Instances == 0 {
		t.Instances, t.OnStoreError = 2, "local"
	}
	where := "middleware " + mine[0].name + " redis"
	merged := traefikUse{traefikMiddleware: mine[0].traefikMiddleware, matchable: true}
	for _, u := range mine {
		if !u.matchable {
			merged.everywhere, merged.matchable, merged.scopes = true, false, nil
			t.same(where, "Traefik's Redis storage keeps one bucket set for every router naming the middleware, and router %s's rule is imported for every request: one rule on every request, on sluice's Redis store (set store.redis.addresses to your Redis and instances to your number of sluice instances).", u.router.name)
			return append(rest, merged)
		}
		i := slices.IndexFunc(merged.scopes, func(s traefikUse) bool { return s.sameScope(&u.traefikMatcher) })
		if i < 0 {
			s := traefikUse{traefikMiddleware: u.traefikMiddleware, matchable: true}
			s.hosts, s.methods, s.headers = u.hosts, u.methods, u.headers
			merged.scopes, i = append(merged.scopes, s), len(merged.scopes)
		}
		s := &merged.scopes[i]
		s.everywhere = s.everywhere || u.everywhere
		s.parts = append(s.parts, u)
		for _, p := range u.paths {
			if !slices.Contains(s.paths, p) {
				s.paths = append(s.paths, p)
			}
		}
	}
	if len(merged.scopes) == 1 {
		s := merged.scopes[0]
		merged.traefikMatcher, merged.everywhere, merged.parts, merged.scopes = s.traefikMatcher, s.everywhere, s.parts, nil
		t.same(where, "Traefik's Redis storage keeps one bucket set for every router naming the middleware: one rule on all their paths, on sluice's Redis store (set store.redis.addresses to your Redis and instances to your number of sluice instances).")
		return append(rest, merged)
	}
	t.same(where, "Traefik's Redis storage keeps one bucket set for every router naming the middleware, and its routers match different hosts, methods or headers: one rule with an alternative for the routers of each (match: a list of %d), each matching their hosts, paths, methods and headers, one count across them, on sluice's Redis store (set store.redis.addresses to your Redis and instances to your number of sluice instances).", len(merged.scopes))
	return append(rest, merged)
}

// traefikRules makes a rule of each router and limiting middleware it
// names, matching the router's hosts and paths, keyed by the middleware's
// source; each router counts apart, as Traefik's in-memory limiter keeps a
// bucket set per router, except the routers of a middleware kept in
// Redis, which share one rule (traefikShared). A file without routers
// makes a rule of each middleware, on every path. Traefik sends a request
// to one router, of the highest priority (traefikPriority): routers
// without a limiting middleware that take a limited prefix's paths cost 0
// (traefikFree), and each rule leaves out the requests routers of more
// priority take (traefikLeaveOut).
func (t *Translation) traefikRules(all []traefikMiddleware, routers []traefikRouter) error {
	t.Costs = map[string]int64{}
	uses, routes, everywhere := t.traefikUses(all, routers)
	if len(uses) > MaxPlaces {
		return tooManyPlaces(len(uses), "routers' rate-limiting middlewares")
	}
	usedBy := map[string]bool{}
	for _, u := range uses {
		usedBy[u.key] = true
	}
	for _, f := range all {
		if f.rl != nil && f.rl.Redis != nil {
			t.traefikStore(f.name, f.rl.Redis)
			uses = t.traefikShared(f.key, uses)
		}
	}
	for _, f := range all {
		if len(routers) > 0 && !usedBy[f.key] {
			t.same("middleware "+f.name, "named by no router: not imported.")
		}
	}
	if !everywhere {
		t.Costs["/"] = 0
		t.same("routes", "the middlewares limit only their routers' paths: other paths cost 0 and the routers' paths cost 1.")
	}
	perRouter := map[*traefikRouter]int{}
	for _, u := range uses {
		perRouter[u.router]++
	}
	for i := range uses {
		u := &uses[i]
		u.rule = -1
		name := u.name
		if u.router != nil {
			name = u.router.name
			if perRouter[u.router] > 1 {
				name += "-" + u.name
			}
		}
		r := Rule{Name: t.ruleName(name), Hosts: u.hosts, Methods: u.methods, Headers: u.headers}
		if !u.everywhere {
			r.Paths = u.paths
			if !everywhere {
				for _, p := range u.paths {
					t.Costs[p] = 1
				}
			}
		}
		if !u.matchable {
			r.Hosts, r.Methods, r.Headers = nil, nil, nil
		}
		for _, sc := range u.scopes {
			m := RuleMatch{Hosts: sc.hosts, Methods: sc.methods, Headers: sc.headers}
			if !sc.everywhere {
				m.Paths = sc.paths
				if !everywhere {
					for _, p := range sc.paths {
						t.Costs[p] = 1
					}
				}
			}
			r.Any = append(r.Any, m)
		}
		l, err := t.traefikUseLimit(&u.traefikMiddleware)
		if err != nil {
			return fmt.Errorf("middleware %s: %w", u.name, err)
		}
		if l == nil {
			continue
		}
		r.Limits = []Limit{*l}
		t.traefikSource(u.name, u.source(), &r)
		u.rule = len(t.SluiceRules)
		t.SluiceRules = append(t.SluiceRules, r)
	}
	var free map[string]bool
	if !everywhere {
		free = t.traefikFree(routes)
	}
	t.traefikLeaveOut(routes, uses, free)
	t.traefikHead(uses)
	t.traefikEntryPoints(routes)
	t.traefikUnlimitedPrefixes(routes, free)
	return nil
}

// traefikUses returns the uses of all's middlewares by routers (of each
// middleware on every request, for a file without routers), every router
// with what it matches, and whether a limit applies to every path; it
// reports the routers' rules that cannot be read, the prefixes of limited
// routers that are string prefixes, the middlewares the file does not
// define, and the limiting middlewares a router runs one after the other.
func (t *Translation) traefikUses(all []traefikMiddleware, routers []traefikRouter) (uses []traefikUse, routes []traefikRoute, everywhere bool) {
	byKey := map[string]traefikMiddleware{}
	for _, f := range all {
		byKey[f.key] = f
	}
	everywhere = len(routers) == 0
	for i := range routers {
		rt := &routers[i]
		match, ok := traefikMatch(rt.rule)
		var mine []traefikMiddleware
		for _, m := range rt.middlewares {
			if f, found := byKey[m]; found {
				mine = append(mine, f)
				uses = append(uses, traefikUse{router: rt, traefikMatcher: match, traefikMiddleware: f, everywhere: !ok || len(match.paths) == 0, matchable: ok})
			}
		}
		t.traefikUnknown(rt)
		t.traefikInTurn("router "+rt.name, mine)
		limited := len(mine) > 0
		routes = append(routes, traefikRoute{router: rt, traefikMatcher: match, ok: ok, limited: limited})
		switch {
		case !limited:
		case !ok:
			t.differs("router "+rt.name, "its rule %q is not only Host, Path, PathPrefix, Method and Header terms joined by &&: its limits are imported for every request.", rt.rule)
			everywhere = true
		case len(match.paths) == 0:
			everywhere = true
		default:
			for _, p := range match.paths {
				if !strings.HasSuffix(p, "/") && slices.Contains(match.paths, p+"/") {
					t.differs("router "+rt.name, "Traefik's PathPrefix(`%s`) is a string prefix, which also matches %sx…; the rule's patterns %s and %s/ match the path and what lies below it only: those requests are not limited.", p, p, p, p)
				}
			}
		}
	}
	if len(routers) == 0 {
		for _, f := range all {
			uses = append(uses, traefikUse{traefikMiddleware: f, everywhere: true})
		}
	}
	return uses, routes, everywhere
}

// traefikUseLimit returns the limit of middleware m on a router's rule:
// nil for a rateLimit that does not limit.
func (t *Translation) traefikUseLimit(m *traefikMiddleware) (*Limit, error) {
	if m.inFlight != nil {
		return t.traefikInFlightLimit(m.name, m.inFlight)
	}
	period, err := traefikPeriod(m.rl.Period)
	if err != nil {
		return nil, err
	}
	return t.traefikLimit(m.name, m.rl, defaultLimitName(period))
}

// traefikUnlimitedPrefixes reports each router without a limiting
// middleware whose PathPrefix has no final slash and whose patterns cost 0
// (free) or a rule leaves out: Traefik gives it every path that starts so
// (/apix for PathPrefix(`/api`)), unlimited, where its patterns /api and
// /api/ hold the path and what lies below it only, so a request of /apix…
// still counts against the rule whose paths hold it.
func (t *Translation) traefikUnlimitedPrefixes(routes []traefikRoute, free map[string]bool) {
	for _, u := range routes {
		if u.limited || !u.ok {
			continue
		}
		for _, p := range u.paths {
			if strings.HasSuffix(p, "/") || !slices.Contains(u.paths, p+"/") || !free[p] && !t.leftOut(p) {
				continue
			}
			t.differs("router "+u.router.name, "Traefik's PathPrefix(`%s`) is a string prefix, which also matches %sx…: the router, without a limiting middleware, takes those requests unlimited; the patterns %s and %s/ that the import frees (cost 0) or leaves out of the limited routers' rules hold the path and what lies below it only, so a request of %sx… still counts against the rule whose paths hold it. Write PathPrefix(`%s/`) (and Path(`%s`)) if the router means the path and what lies below it.", p, p, p, p, p, p, p)
		}
	}
}

// leftOut reports whether a rule leaves pattern p out (except_paths, of
// the rule or an alternative, or the paths of an except: entry).
func (t *Translation) leftOut(p string) bool {
	return slices.ContainsFunc(t.SluiceRules, func(r Rule) bool {
		return slices.Contains(r.ExceptPaths, p) ||
			slices.ContainsFunc(r.Any, func(m RuleMatch) bool { return slices.Contains(m.ExceptPaths, p) }) ||
			slices.ContainsFunc(r.Except, func(m RuleMatch) bool { return slices.Contains(m.Paths, p) })
	})
}

// traefikPlace is a router's use of a middleware in the rule of that use:
// the router's matcher, the rule (an index in t.SluiceRules; -1: none) and
// its alternative (-1: the rule's own match).
type traefikPlace struct {
	traefikUse
	alt int
}

// traefikPlaces returns the routers' places in the rules of uses: one per
// use of a router, and one per router merged into a use (traefikShared).
func traefikPlaces(uses []traefikUse) []traefikPlace {
	var out []traefikPlace
	for _, u := range uses {
		switch {
		case len(u.scopes) > 0:
			for k, sc := range u.scopes {
				for _, p := range sc.parts {
					p.rule = u.rule
					out = append(out, traefikPlace{p, k})
				}
			}
		case len(u.parts) > 0:
			for _, p := range u.parts {
				p.rule = u.rule
				out = append(out, traefikPlace{p, -1})
			}
		default:
			out = append(out, traefikPlace{u, -1})
		}
	}
	return out
}

// traefikMatcher is what a router rule matches: host names, ServeMux path
// patterns, methods and headers (name, value), each list empty when the
// rule does not say.
type traefikMatcher struct {
	hosts, paths, methods []string
	headers               []HeaderMatch
}

// narrow reports whether the matcher matches only some hosts, methods or
// headers.
func (m *traefikMatcher) narrow() bool {
	return len(m.hosts)+len(m.methods)+len(m.headers) > 0
}

// sameScope reports whether m and o match the same hosts, methods and
// headers.
func (m *traefikMatcher) sameScope(o *traefikMatcher) bool {
	return slices.Equal(m.hosts, o.hosts) && slices.Equal(m.methods, o.methods) && slices.Equal(m.headers, o.headers)
}

// apart reports whether no request matches both m's and o's hosts,
// methods and headers (a header both require with different values).
func (m *traefikMatcher) apart(o *traefikMatcher) bool {
	return disjoint(m.hosts, m.methods, o.hosts, o.methods) || slices.ContainsFunc(m.headers, func(h HeaderMatch) bool {
		return h.Value != "" && slices.ContainsFunc(o.headers, func(g HeaderMatch) bool { return g.Name == h.Name && g.Value != "" && g.Value != h.Value })
	})
}

// traefikMatch reads a router rule made of Host, Path, PathPrefix, Method
// and Header (Headers in Traefik 2) terms joined by &&; ok is false for any
// other rule (||, !, regular expressions, other matchers, two paths).
func traefikMatch(rule string) (m traefikMatcher, ok bool) {
	if strings.ContainsAny(rule, "|!") || strings.TrimSpace(rule) == "" {
		return m, false
	}
	npaths := 0
	for _, term := range strings.Split(rule, "&&") {
		term = strings.TrimSpace(term)
		name, args, found := strings.Cut(term, "(")
		if !found || !strings.HasSuffix(args, ")") {
			return m, false
		}
		var vals []string
		for _, a := range strings.Split(strings.TrimSuffix(args, ")"), ",") {
			a = strings.TrimSpace(a)
			if len(a) < 2 || (a[0] != '`' && a[0] != '"') || a[len(a)-1] != a[0] {
				return m, false
			}
			vals = append(vals, a[1:len(a)-1])
		}
		switch name = strings.TrimSpace(name); name {
		case "Host":
			for _, h := range vals {
				if !validHostName(h) {
					return m, false
				}
			}
			m.hosts = append(m.hosts, vals...)
		case "Method":
			for _, v := range vals {
				if !validHeaderName(v) {
					return m, false
				}
				m.methods = append(m.methods, strings.ToUpper(v))
			}
		case "Header", "Headers":
			if len(vals) != 2 || !validHeaderName(vals[0]) || vals[1] == "" {
				return m, false
			}
			m.headers = append(m.headers, HeaderMatch{Name: http.CanonicalHeaderKey(vals[0]), Value: vals[1]})
		case "Path", "PathPrefix":
			if npaths++; npaths > 1 {
				return m, false
			}
			for _, v := range vals {
				pats, ok := traefikPatterns(name == "PathPrefix", v)
				if !ok {
					return m, false
				}
				m.paths = append(m.paths, pats...)
			}
		default:
			return m, false
		}
	}
	return m, true
}

// traefikPatterns returns the ServeMux patterns of a Path (exact) or a
// PathPrefix.
func traefikPatterns(prefix bool, p string) ([]string, bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "{}") {
		return nil, false
	}
	var out []string
	switch {
	case prefix && strings.HasSuffix(p, "/"):
		out = []string{p}
	case prefix:
		out = []string{p, p + "/"}
	case strings.HasSuffix(p, "/"):
		out = []string{p + "{$}"}
	default:
		out = []string{p}
	}
	for _, pat := range out {
		if !validPattern(pat) {
			return nil, false
		}
	}
	return out, true
}
