package migrate

import (
	"slices"
	"strings"
)

// kongAuthPlugins are Kong's plugins that name a request's consumer.
var kongAuthPlugins = []string{"key-auth", "key-auth-enc", "basic-auth", "hmac-auth", "jwt", "oauth2", "ldap-auth", "ldap-auth-advanced", "openid-connect", "mtls-auth", "session"}

// kongUnreadAuthPlugins are Kong's authentication plugins whose
// credentials sluice reads no client from (a user and password, a
// signature, a certificate, a session cookie): it reads API keys from
// headers and Bearer tokens only.
var kongUnreadAuthPlugins = []string{"basic-auth", "hmac-auth", "ldap-auth", "ldap-auth-advanced", "mtls-auth", "session"}

// kongUnreadAuth reports each enabled plugin of ps that names consumers by
// credentials sluice cannot read (kongUnreadAuthPlugins): Kong counts
// those consumers apart, sluice by their address.
func (t *Translation) kongUnreadAuth(ps []kongPlugin) {
	var seen []string
	for _, p := range ps {
		if !isKongAuth(p) || !slices.Contains(kongUnreadAuthPlugins, p.Name) || slices.Contains(seen, p.Name) {
			continue
		}
		seen = append(seen, p.Name)
		t.differs(p.Name, "Kong names a request's consumer by its %s credentials, so limit_by consumer (or credential) counts each consumer apart and a consumer's plugin runs on its requests; sluice reads no client from them: such a request counts by its address, one count for every consumer behind one address (by its key where it also sends an API key or a Bearer token), and gets no consumer's plan. Give those clients API keys (key-auth) or tokens (identity.jwt), or have a proxy in front name the user in a header (identity.user_header).", p.Name)
	}
}

// kongAnonymousConsumer reports each authentication plugin of ps whose
// config.anonymous names a consumer (of consumers, by username or id):
// Kong names every request without valid credentials that consumer, runs
// its rate-limiting plugins on them and counts them as one consumer,
// where sluice gives such a request the imported plan (anonymous_plan)
// and counts it by its address.
func (t *Translation) kongAnonymousConsumer(ps []kongPlugin, consumers []kongConsumer) {
	var seen []string
	for _, p := range ps {
		a := p.Config.Anonymous
		if !isKongAuth(p) || a == "" || slices.Contains(seen, a) {
			continue
		}
		seen = append(seen, a)
		name := a
		if i := slices.IndexFunc(consumers, func(c kongConsumer) bool { return c.Username == a || c.ID == a }); i >= 0 {
			name = consumers[i].Username
		}
		t.differs(p.Name+" anonymous", "Kong names every request without valid credentials consumer %s (config.anonymous), runs that consumer's rate-limiting plugins on them instead of refusing them, and counts them all as that one consumer (limit_by consumer: one count for every such client together); sluice gives a request without a listed key the imported plan (anonymous_plan: %s) and counts each address apart, so those clients get the imported plan's limits each instead of %s's shared. To keep Kong's: set anonymous_plan to %s's plan (consumer-%s, when it has a plugin), make that plan's limits a rule of key rule for it, and list the keys of the other consumers (unknown_keys: ip).", name, PlanName, name, name, name)
	}
}

// isKongAuth reports whether p is an enabled plugin that names a request's
// consumer.
func isKongAuth(p kongPlugin) bool {
	return slices.Contains(kongAuthPlugins, p.Name) && (p.Enabled == nil || *p.Enabled)
}

// kongHasConsumerPlans reports whether a consumer or a consumer group has
// an enabled rate-limiting plugin.
func kongHasConsumerPlans(consumers []kongConsumer, groups []kongConsumerGroup) bool {
	for _, c := range consumers {
		if _, ok := kongLimitPlugin(c.Plugins); ok {
			return true
		}
	}
	for _, g := range groups {
		if _, ok := kongLimitPlugin(g.Plugins); ok {
			return true
		}
	}
	return false
}

// kongConsumerPluginNames reports, of rate-limiting and
// rate-limiting-advanced (kongPluginIndex), which names the enabled plugins
// of consumers and consumer groups are of.
func kongConsumerPluginNames(consumers []kongConsumer, groups []kongConsumerGroup) [2]bool {
	var out [2]bool
	for _, c := range consumers {
		for i, ok := range kongPluginNames(kongLimitPlugins(c.Plugins)) {
			out[i] = out[i] || ok
		}
	}
	for _, g := range groups {
		for i, ok := range kongPluginNames(kongLimitPlugins(g.Plugins)) {
			out[i] = out[i] || ok
		}
	}
	return out
}

// kongMarkAuthenticated marks the routes of services and the loose routes
// that an authentication plugin runs on (the route's own or its
// service's; the file has no global one), and names the others in
// kongUnauthRoutes. When some routes are left and consumers have plans,
// kongAuthed becomes what the authenticated routes match: their paths, and
// the groups of them a rule each matches exactly (kongRouteGroups).
func (t *Translation) kongMarkAuthenticated(services []kongService, routes []kongRoute) {
	var authed []kongRoute
	mark := func(r *kongRoute, service bool) {
		r.authenticated = service || slices.ContainsFunc(r.Plugins, isKongAuth)
		if r.authenticated {
			authed = append(authed, *r)
			return
		}
		for _, p := range routePaths(*r) {
			t.kongUnauthPaths = append(t.kongUnauthPaths, kongPathPatterns(p)...)
		}
		name := r.Name
		if name == "" {
			name = strings.Join(r.Paths, " ")
		}
		t.kongUnauthRoutes = append(t.kongUnauthRoutes, name)
	}
	for i := range services {
		s := &services[i]
		for j := range s.Routes {
			mark(&s.Routes[j], slices.ContainsFunc(s.Plugins, isKongAuth))
		}
	}
	for j := range routes {
		mark(&routes[j], false)
	}
	if len(t.kongUnauthRoutes) == 0 || len(authed) == 0 || !t.kongConsumerPlans {
		return
	}
	var ms []kongMatch
	for _, r := range authed {
		ms = append(ms, t.kongRouteMatch(r, "consumers on route "+r.Name))
	}
	var m kongMatch
	for _, g := range kongRouteGroups(ms) {
		g.paths = slices.DeleteFunc(g.paths, func(q string) bool { return kongPathPatterns(q) == nil })
		if len(g.paths) > 0 {
			m.paths = append(m.paths, g.paths...)
			m.groups = append(m.groups, g)
		}
	}
	if len(m.groups) > 0 {
		t.kongAuthed = &m
	}
}

// kongSplits reports whether a plugin of configuration c counts apart on
// the routes no authentication plugin runs on, where one runs on others:
// Kong names no consumer there, so limit_by consumer (or credential)
// counts by address, and a consumer's or consumer group's plugin of c's
// name does not replace it there (c.replaced). A plugin that counts
// otherwise, where no consumer's plugin of its name replaces it, keeps
// one count over all its routes, as Kong's counter of it names no route.
func (t *Translation) kongSplits(c kongConfig) bool {
	if len(t.kongUnauthRoutes) == 0 || t.kongAnonymous {
		return false
	}
	return kongByConsumer(c) || c.replaced
}

// kongByConsumer reports whether c counts per consumer.
func kongByConsumer(c kongConfig) bool {
	return c.LimitBy == "" || c.LimitBy == "consumer" || c.LimitBy == "credential"
}

// kongAuthScopes returns sc on routes rs (rws[i] names where rs[i]'s match
// is reported): one scope matching them all, or, when sc's plugin counts
// apart where no consumer is named (kongSplits), two of one sibling: where
// it counts per consumer, one for the routes an authentication plugin runs
// on and one (unauth) for the others; where it counts several consumers
// together (kongSharedCount), one for all of rs, for the plans without a
// consumer's plugin of its name, and one (unauth, namedOnly) for the
// routes without authentication, for the plans with one.
func (t *Translation) kongAuthScopes(sc kongScope, rs []kongRoute, rws []string) []kongScope {
	split := t.kongSplits(sc.config)
	var ms []kongMatch // of each route of rs
	var parts [2][]int // indices in rs: authenticated routes, the others
	for i, r := range rs {
		g := 0
		if split && !r.authenticated {
			g = 1
		}
		ms, parts[g] = append(ms, t.kongRouteMatch(r, rws[i])), append(parts[g], i)
	}
	both := len(parts[0]) > 0 && len(parts[1]) > 0
	wide := both && kongSharedCount(sc.config)
	if wide {
		parts[0] = slices.Concat(parts[0], parts[1])
		slices.Sort(parts[0])
	}
	var out []kongScope
	for g, idx := range parts {
		if len(idx) == 0 {
			continue
		}
		s := sc
		if both {
			s.sibling = sc.where
		}
		if g == 1 {
			s.unauth, s.namedOnly = true, wide
			if both {
				s.where, s.name = sc.where+" on routes without authentication", sc.name+"-noauth"
				t.kongSplitCount(sc)
			}
		}
		var gms []kongMatch
		var ats []int
		for _, i := range idx {
			gms, ats = append(gms, ms[i]), append(ats, rs[i].at)
		}
		m := t.kongRoutesMatch(gms, s.where)
		s.paths, s.hosts, s.methods, s.groups, s.routes = m.paths, m.hosts, m.methods, m.groups, ats
		out = append(out, s)
	}
	return out
}

// kongSharedCount reports whether a plugin of configuration c counts the
// requests of several consumers together, one count wherever it runs: by
// address, by a header's value or per service (not per consumer, nor per
// path, which kongPathRule counts apart).
func kongSharedCount(c kongConfig) bool {
	return !kongByConsumer(c) && c.LimitBy != "path"
}

// kongUnauthenticatedScopes makes each global plugin that counts apart
// where no consumer is named (kongSplits) the scopes of the routes it runs
// on (those without a plugin of its name, nor a service with one), split
// by authentication: Kong runs no plugin on a request no route matches.
func (t *Translation) kongUnauthenticatedScopes(scopes []kongScope, services []kongService, loose []kongRoute) []kongScope {
	for i := 0; i < len(scopes); i++ {
		g := scopes[i]
		if g.paths != nil || !t.kongSplits(g.config) {
			continue
		}
		var rs []kongRoute
		var rws []string
		for _, s := range services {
			if hasOwnPlugin(s.Plugins, g.config.advanced) {
				continue
			}
			for _, r := range s.Routes {
				if !hasOwnPlugin(r.Plugins, g.config.advanced) {
					rs, rws = append(rs, r), append(rws, g.where+" route "+r.Name)
				}
			}
		}
		for _, r := range loose {
			if !hasOwnPlugin(r.Plugins, g.config.advanced) {
				rs, rws = append(rs, r), append(rws, g.where+" route "+r.Name)
			}
		}
		if len(rs) == 0 {
			continue
		}
		parts := t.kongAuthScopes(g, rs, rws)
		scopes = slices.Concat(scopes[:i], parts, scopes[i+1:])
		i += len(parts) - 1
	}
	return scopes
}

// kongLeaveOutSiblings makes the rule of each part of a plugin split by
// authentication (rules[i] of scopes[i]; -1: none) leave out the other
// part's route paths below its own, as Kong's router gives a request to
// the route of the longest path; where it cannot, both count it
// (reported).
func (t *Translation) kongLeaveOutSiblings(scopes []kongScope, ruleAt []int) {
	for i, s := range scopes {
		for j, o := range scopes {
			if i == j || s.sibling == "" || o.sibling != s.sibling || ruleAt[i] < 0 || o.namedOnly {
				continue // the rule of every route keeps those without authentication
			}
			r := &t.SluiceRules[ruleAt[i]]
			for k, a := range r.alternatives() {
				alt := k
				if len(r.Any) == 0 {
					alt = -1
				}
				var theirs []string
				for _, q := range o.paths {
					if slices.Contains(s.paths, q) {
						continue // its own route's, in the rule of every route too
					}
					for _, pat := range kongPathPatterns(q) {
						if slices.ContainsFunc(a.Paths, func(p string) bool { return below(pat, p) }) {
							theirs = append(theirs, pat)
						}
					}
				}
				if len(theirs) == 0 {
					continue
				}
				if r.leaveOutAt(alt, theirs, a.Paths) {
					t.same(s.where, "Kong's router gives the requests on %s to the routes of the longest path: the rule leaves them out (except_paths), for the rule of the %s.", strings.Join(theirs, " "), o.where)
				} else {
					t.differs(s.where, "Kong's router gives the requests on %s to the routes of the longest path, of the %s; the rule cannot leave them out (except_paths) without leaving out a route below them that it covers: they also count against it.", strings.Join(theirs, " "), o.where)
				}
			}
		}
	}
}

// kongSplitCount says how the plugin of sc counts once split by
// authentication: exactly as Kong where it counts per consumer (Kong's
// identifier is the consumer on the authenticated routes and the address
// on the others, never one count for both); where it counts several
// consumers together (kongSharedCount), one count over every route for
// the plans without a consumer's plugin of its name, as Kong's, and one
// apart on the routes without authentication for the plans with one; for
// limit_by path, one count become two.
func (t *Translation) kongSplitCount(sc kongScope) {
	if kongSharedCount(sc.config) {
		noun := map[string]string{"header": "value of " + sc.config.HeaderName, "service": "service"}[sc.config.LimitBy]
		t.differs(sc.where, "an authentication plugin runs on some of its routes only, and a consumer's or consumer group's plugin of its name runs in its place only where Kong names that consumer: its rule of every route counts the clients of the plans without such a plugin, one count (limit_by %s) as Kong's, and its rule of the routes without authentication the clients of the plans with one, apart from the others' there, where Kong counted them together: one %s may have the limit there once for each.", sc.config.LimitBy, or(noun, "address"))
		return
	}
	if kongByConsumer(sc.config) {
		t.same(sc.where, "an authentication plugin runs on some of its routes only: on those Kong counts per consumer, on the others it names no consumer and counts per address, whatever key a request carries. Two rules say the same: the routes with authentication keyed by API key, the others by address (key ip/32/128), for the clients of every plan.")
		return
	}
	t.differs(sc.where, "an authentication plugin runs on some of its routes only, and the consumers' plugins replace this one only where it names a consumer: sluice's rules for the routes with and without authentication are two, the second for the clients of every plan, so a client that Kong counted once (limit_by %s) on both has each rule's limit on each.", sc.config.LimitBy)
}
