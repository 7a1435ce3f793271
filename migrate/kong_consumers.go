package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
)

// kongConsumers makes a plan of each consumer group's rate-limiting
// plugins and of each consumer's, chosen by the consumers' key-auth
// credentials, listed by SHA-256. Kong runs one plugin of each name
// (rate-limiting, rate-limiting-advanced) on a request, the most specific:
// a consumer's in place of its groups', a group's in place of the route's,
// service's or global one. So a plan holds its consumer's plugins, its
// group's of the names the consumer has none of, and, of the names neither
// has, the wider plugins still apply to it: the imported plan's limits,
// which count per consumer, are copied into it (kongWiderLimits), and the
// rules (the route and service plugins, when they differ, and a plugin that
// counts otherwise than per consumer, by its own key) apply to the imported
// plan's clients and to those plans (match.plans).
//
// Then the plugins that name a consumer and a service become rules of
// their own (kongConsumerServices).
func (t *Translation) kongConsumers(f *kongFile) error {
	consumers, groups := f.Consumers, f.ConsumerGroups
	n := len(f.consumerServices) // plugins, each a plan or a rule
	for _, g := range groups {
		n += len(kongLimitPlugins(g.Plugins))
	}
	for _, c := range consumers {
		n += len(kongLimitPlugins(c.Plugins))
	}
	if n > MaxPlaces {
		return tooManyPlaces(n, "consumer and consumer group rate-limiting plugins")
	}
	var plans []string
	has := map[string][2]bool{}      // plan → whether it holds a rate-limiting, a rate-limiting-advanced plugin
	own := map[string]string{}       // consumer's username → the plan of its own plugin
	groupPlan := map[string]string{} // group name → its plan
	for _, g := range groups {
		ps := kongLimitPlugins(g.Plugins)
		if len(ps) == 0 {
			continue
		}
		name, err := t.kongPlan("group-"+g.Name, "plugin on consumer group "+g.Name, ps, true)
		if err != nil {
			return err
		}
		groupPlan[g.Name], has[name] = name, kongPluginNames(ps)
		plans = append(plans, name)
	}
	for _, c := range consumers {
		var plan, where string
		member := kongGroupsOf(c, groups, groupPlan)
		if ps := kongLimitPlugins(c.Plugins); len(ps) > 0 {
			where = "plugin on consumer " + c.Username
			ps = t.kongGroupPluginsBeside(ps, c, member, groups, where)
			name, err := t.kongPlan("consumer-"+c.Username, where, ps, false)
			if err != nil {
				return err
			}
			plan, own[c.Username], has[name] = name, name, kongPluginNames(ps)
			plans = append(plans, name)
		} else if len(member) > 0 {
			plan, where = groupPlan[member[0]], "consumer "+c.Username+" of consumer group "+member[0]
			if len(member) > 1 {
				t.differs(where, "%s is in consumer groups %s, each with a rate-limiting plugin; Kong runs one of them, sluice gives it plan %s (its first group's).", c.Username, strings.Join(member, ", "), plan)
			}
		} else {
			continue
		}
		t.kongKeys(c, plan, where)
	}
	if len(plans) == 0 {
		return t.kongConsumerServices(f, own)
	}
	t.kongWiderLimits(plans, has, f.limitsAdvanced)
	if n := len(t.kongUnauthRoutes); n > 0 && !t.kongAnonymous {
		routes := t.kongUnauthRoutes[:min(n, 5)]
		more := ""
		if n > len(routes) {
			more = fmt.Sprintf(" and %d more", n-len(routes))
		}
		if t.kongAuthed != nil {
			t.same("consumers", "no authentication plugin runs on route %s%s, so Kong names no consumer there and runs the route's other plugins; the limits of plans %s are rules matching the routes with authentication (match.plans), the plans' own limit refuses nothing, and the rules of the plugins on the other routes apply to every plan's clients.",
				strings.Join(routes, ", route "), more, strings.Join(plans, ", "))
		} else {
			t.differs("consumers", "no authentication plugin runs on route %s%s, so Kong names no consumer there and limits a request as the route's other plugins do; the routes with authentication have no path a rule can match, so sluice gives a listed key its plan (%s) on every path, there too.",
				strings.Join(routes, ", route "), more, strings.Join(plans, ", "))
		}
	}
	if t.kongAnonymous {
		t.differs("consumers", "no authentication plugin in the file names a consumer, so Kong never ran the plugins of consumers and consumer groups; sluice gives their plans (%s) to the keys listed for them. Import the file with its authentication plugin, or delete those plans and keys.", strings.Join(plans, ", "))
	}
	scoped := 0
	for i := range t.SluiceRules {
		r := &t.SluiceRules[i]
		if f.namedOnlyRules[r.Name] {
			kongNamedOnlyPlans(r, plans, has, f.advancedRules[r.Name])
			continue
		}
		if len(r.Plans) > 0 || r.everyPlan { // a group's own count keeps its plan
			continue
		}
		adv := f.advancedRules[r.Name]
		r.Plans = []string{PlanName}
		for _, p := range plans {
			if !has[p][kongPluginIndex(adv)] {
				r.Plans = append(r.Plans, p)
			}
		}
		scoped++
	}
	if scoped > 0 {
		where := ""
		if t.kongAuthed != nil {
			where = " on the routes with authentication"
		}
		t.same("consumers", "the rules made of the route, service and global plugins%s apply to the clients of plan %s, and of the plans of consumers and consumer groups that have no plugin of the rule's name (match.plans): the plans of consumers and consumer groups (%s) are limited by their own plugin of a name alone there, as Kong runs a consumer's or its group's plugin in place of the others of its name (rate-limiting, rate-limiting-advanced), and both names' plugins on a request.", where, PlanName, strings.Join(plans, ", "))
	}
	return t.kongConsumerServices(f, own)
}

// kongNamedOnlyPlans scopes r, the rule of a plugin (advanced:
// rate-limiting-advanced) on the routes without authentication, to the
// plans of plans that hold a plugin of its name (has: plan → the names of
// its plugins): its rule of every route counts the others' clients.
func kongNamedOnlyPlans(r *Rule, plans []string, has map[string][2]bool, advanced bool) {
	for _, p := range plans {
		if has[p][kongPluginIndex(advanced)] {
			r.Plans = append(r.Plans, p)
		}
	}
}

// kongGroupPluginsBeside returns ps, the rate-limiting plugins of consumer
// c, with those of its first consumer group of member (groups with a plan)
// of the names c has none of: Kong runs the consumer's plugin of a name in
// place of its group's, and its group's of the other name beside it. A
// group's plugin that counts the group together (identifier
// consumer-group) counts c alone in c's plan: reported at where.
func (t *Translation) kongGroupPluginsBeside(ps []kongPlugin, c kongConsumer, member []string, groups []kongConsumerGroup, where string) []kongPlugin {
	if len(member) == 0 {
		return ps
	}
	gi := slices.IndexFunc(groups, func(g kongConsumerGroup) bool { return g.Name == member[0] })
	names := kongPluginNames(ps)
	for _, p := range kongLimitPlugins(groups[gi].Plugins) {
		if names[kongPluginIndex(p.Config.advanced)] {
			continue
		}
		ps = append(ps, p)
		t.same(where, "%s's consumer group %s has a %s plugin and %s has none of that name: Kong runs the group's beside the consumer's own, and the consumer's plan holds both.", c.Username, member[0], p.Name, c.Username)
	}
	return ps
}

// kongWiderLimits gives each plan of plans that has no plugin of the name
// the imported plan's limits are of (advanced: rate-limiting-advanced) a
// copy of those limits, as Kong runs the wider plugin of that name on its
// clients' requests too (has: plan → the names of its plugins). The
// imported plan's limits are then a plugin's that counts per consumer (one
// counting by address, header or service is a rule of its own key instead,
// made by Kong), so a copy counting per client of the plan counts as Kong
// does. Where the imported plan's limits count only some paths (its
// costs), the copy is a rule of those paths for the plan's clients (key
// client).
func (t *Translation) kongWiderLimits(plans []string, has map[string][2]bool, advanced bool) {
	var ls []Limit
	for _, l := range t.Limits {
		if !l.Global {
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		return
	}
	var paths []string
	if t.Costs["/"] == 0 && len(t.Costs) > 0 {
		for p, cost := range t.Costs {
			if cost > 0 {
				paths = append(paths, p)
			}
		}
		slices.Sort(paths)
	}
	for _, name := range plans {
		if has[name][kongPluginIndex(advanced)] {
			continue
		}
		pi := slices.IndexFunc(t.Plans, func(p Plan) bool { return p.Name == name })
		if pi < 0 {
			continue
		}
		if paths != nil {
			r := Rule{Name: t.ruleName(name + "-imported"), Plans: []string{name}, Key: []string{"client"}, Paths: slices.Clone(paths), Limits: slices.Clone(ls)}
			t.SluiceRules = append(t.SluiceRules, r)
			t.same("plan "+name, "it has no plugin of the name of the imported plan's (%s), which Kong also runs on its clients' requests: rule %s counts them as the imported plan's limits do, on the same paths (key client).", kongPluginName(advanced), r.Name)
			continue
		}
		pl := &t.Plans[pi]
		for _, l := range ls {
			l.Name = uniqueName(l.Name, 56, func(n string) bool {
				return slices.ContainsFunc(pl.Limits, func(o Limit) bool { return o.Name == n })
			})
			pl.Limits = append(pl.Limits, l)
		}
		t.same("plan "+name, "it has no plugin of the name of the imported plan's (%s), which Kong also runs on its clients' requests: it holds the imported plan's limits too.", kongPluginName(advanced))
	}
}

// kongLimitPlugin returns the first enabled rate-limiting or
// rate-limiting-advanced plugin of ps, if any.
func kongLimitPlugin(ps []kongPlugin) (kongPlugin, bool) {
	if out := kongLimitPlugins(ps); len(out) > 0 {
		return out[0], true
	}
	return kongPlugin{}, false
}

// kongLimitPlugins returns the first enabled rate-limiting plugin of ps
// and the first enabled rate-limiting-advanced one, those there are, in
// the order of ps: Kong runs one of each name on a request.
func kongLimitPlugins(ps []kongPlugin) []kongPlugin {
	var out []kongPlugin
	var seen [2]bool
	for _, p := range ps {
		if p.Name != "rate-limiting" && p.Name != "rate-limiting-advanced" || p.Enabled != nil && !*p.Enabled {
			continue
		}
		if p.Name == "rate-limiting-advanced" {
			p.Config.advanced, p.Config.LimitBy, p.Config.Policy = true, p.Config.Identifier, p.Config.Strategy
		}
		if i := kongPluginIndex(p.Config.advanced); !seen[i] {
			seen[i], out = true, append(out, p)
		}
	}
	return out
}

// kongPluginIndex is 0 for rate-limiting, 1 for rate-limiting-advanced
// (advanced).
func kongPluginIndex(advanced bool) int {
	if advanced {
		return 1
	}
	return 0
}

// kongPluginName names the rate-limiting plugin (advanced:
// rate-limiting-advanced).
func kongPluginName(advanced bool) string {
	if advanced {
		return "rate-limiting-advanced"
	}
	return "rate-limiting"
}

// kongPluginNames reports, of rate-limiting and rate-limiting-advanced,
// which ps (of kongLimitPlugins) holds.
func kongPluginNames(ps []kongPlugin) [2]bool {
	var out [2]bool
	for _, p := range ps {
		out[kongPluginIndex(p.Config.advanced)] = true
	}
	return out
}

// kongPlan makes a plan of a consumer's or a consumer group's plugins ps
// (group), one of each name, named after base (made unique), and returns
// its name. A group's plugin that counts the group's consumers together
// (identifier consumer-group) is a rule of one count for the plan's
// clients; so are the plugins of a plan where authentication runs on some
// routes only, rules of those routes; the plan's own limit is then one
// that never refuses.
func (t *Translation) kongPlan(base, where string, ps []kongPlugin, group bool) (string, error) {
	name := uniqueName(base, 56, func(n string) bool {
		return n == PlanName || slices.ContainsFunc(t.Plans, func(p Plan) bool { return p.Name == n })
	})
	var ls []Limit
	var ruled []string // the rules of the plan's limits
	for _, p := range ps {
		w := where
		if len(ps) > 1 && p.Config.advanced {
			w += " (advanced)"
		}
		pls, err := t.kongPeriods(kongScope{where: w, config: p.Config}, func(n string) string { return n })
		if err != nil {
			return "", err
		}
		key := []string{"client"}
		switch p.Config.LimitBy {
		case "", "consumer", "credential":
		case "consumer-group":
			if !group {
				t.differs(w, "identifier consumer-group: Kong counts the consumer's group together; plan %s counts each key alone.", name)
				break
			}
			key = []string{"rule"}
			t.same(w, "identifier consumer-group: the group's consumers count together, as one count for every client of plan %s (rule %s, key rule).", name, name)
		default:
			t.differs(w, "limit_by %s: plan %s counts each API key, as Kong counts per consumer.", p.Config.LimitBy, name)
		}
		if key[0] == "rule" || t.kongAuthed != nil {
			// The plugin's limits are a rule: of one count for the group,
			// or of the routes where an authentication plugin names the
			// consumer.
			groups := []kongMatch{{}}
			if a := t.kongAuthed; a != nil {
				groups = a.groups
			}
			ruled = append(ruled, t.kongMatchRules(Rule{Name: name, Key: key, Plans: []string{name}, Limits: pls}, groups, w)...)
			continue
		}
		for _, l := range pls {
			l.Name = uniqueName(l.Name, 56, func(n string) bool { return slices.ContainsFunc(ls, func(o Limit) bool { return o.Name == n }) })
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		ls = []Limit{{Name: unlimited, Algorithm: "fixed-window", Quantity: sluice.MaxQuantity, Window: time.Second, Shadow: true,
			Source: where + ": the plan's limits are rule " + strings.Join(ruled, ", rule ")}}
	}
	t.Plans = append(t.Plans, Plan{Name: name, Limits: ls})
	return name, nil
}

// kongMatchRules adds a copy of r, named after r.Name, that matches groups
// (matches of routes, kongRouteGroups; an empty one: every request), an
// alternative of it for each where they are several (Rule.Any), so that
// it counts their requests together, as Kong counts a plugin's, and
// returns its name (none when every group's paths are regular
// expressions). Each match leaves out the paths of routes without
// authentication below its own, which name no consumer; where it cannot,
// the report at where says so.
func (t *Translation) kongMatchRules(r Rule, groups []kongMatch, where string) []string {
	name := t.ruleName(r.Name)
	var alts []RuleMatch
	for _, g := range groups {
		q := Rule{Name: name, Hosts: g.hosts, Methods: g.methods, ExceptPaths: slices.Clone(r.ExceptPaths)}
		for _, p := range g.paths {
			for _, pat := range kongPathPatterns(p) {
				if !slices.Contains(q.Paths, pat) {
					q.Paths = append(q.Paths, pat)
				}
			}
		}
		if len(g.paths) > 0 && len(q.Paths) == 0 {
			continue // only regular expressions: reported with the routes
		}
		if len(q.Paths) > 0 {
			// Kong gives a request to the route of the longest path: the
			// routes without authentication below these name no consumer.
			var theirs []string
			for _, u := range t.kongUnauthPaths {
				if slices.ContainsFunc(q.Paths, func(p string) bool { return below(u, p) }) {
					theirs = append(theirs, u)
				}
			}
			if len(theirs) > 0 && !q.leaveOut(theirs, q.Paths) {
				t.differs(where, "routes without authentication lie below the paths of routes with it, and routes with it below those (%s): rule %s cannot leave the first out (except_paths) without the others, so it also limits the consumer's requests there, where Kong names no consumer.", strings.Join(theirs, " "), q.Name)
			}
		}
		alts = append(alts, RuleMatch{Paths: q.Paths, Hosts: q.Hosts, Methods: q.Methods, ExceptPaths: q.ExceptPaths})
	}
	if len(alts) == 0 {
		return nil
	}
	q := r
	q.Name = name
	if len(alts) == 1 {
		a := alts[0]
		q.Paths, q.Hosts, q.Methods, q.ExceptPaths = a.Paths, a.Hosts, a.Methods, a.ExceptPaths
	} else {
		q.Paths, q.Hosts, q.Methods, q.Headers, q.ExceptPaths, q.Any = nil, nil, nil, nil, nil, alts
		t.same(where, "the routes where Kong names a consumer match different hosts or methods: rule %s has an alternative for each group of them (match: a list of %d), each matching its routes' own hosts, paths and methods, as Kong's routes do, and counts the plugin's requests on all of them together, as Kong does.", name, len(alts))
	}
	t.SluiceRules = append(t.SluiceRules, q)
	return []string{name}
}

// kongGroupsOf returns the consumer groups of c that have a plan, in the
// order of the file's consumer groups: those c names, and those naming c.
func kongGroupsOf(c kongConsumer, groups []kongConsumerGroup, groupPlan map[string]string) []string {
	var out []string
	for _, g := range groups {
		if _, ok := groupPlan[g.Name]; !ok {
			continue
		}
		named := slices.ContainsFunc(c.Groups, func(n kongName) bool { return n.Name == g.Name })
		names := slices.ContainsFunc(g.Consumers, func(n kongName) bool { return n.Username != "" && n.Username == c.Username })
		if named || names {
			out = append(out, g.Name)
		}
	}
	return out
}

// kongKeys lists c's key-auth credentials under keys: with plan, and says
// what differs.
func (t *Translation) kongKeys(c kongConsumer, plan, where string) {
	n := t.kongListKeys(c, plan, where)
	if n == 0 {
		t.differs(where, "plan %s holds the limits; the file has no key-auth credential of %s: list its keys under keys: (by SHA-256) with plan: %s.", plan, c.Username, plan)
	} else {
		t.same(where, "plan %s holds the limits, chosen by %s's %s (keys:, by SHA-256, never in clear), in place of the imported plan's of the same plugin name, as Kong runs that plugin in place of the wider ones of its name%s.", plan, c.Username, plural(n, "key-auth credential"),
			map[bool]string{true: " where an authentication plugin names the consumer", false: ""}[t.kongAuthed != nil])
	}
	if n > 1 {
		t.differs(where, "the consumer's %d credentials shared one count in Kong; in sluice each key counts alone.", n)
	}
}

// kongListKeys lists c's key-auth credentials under keys: with plan, reads
// API keys from the key-auth headers, and returns how many it listed; a
// credential another consumer's key took is reported at where.
func (t *Translation) kongListKeys(c kongConsumer, plan, where string) int {
	n := 0
	for _, cr := range c.Credentials {
		if cr.Key == "" {
			continue
		}
		sum := sha256.Sum256([]byte(cr.Key))
		if slices.ContainsFunc(t.Keys, func(k Key) bool { return k.SHA256 == hex.EncodeToString(sum[:]) }) {
			t.differs(where, "a key-auth credential of %s is another consumer's too: it keeps the first one's plan.", c.Username)
			continue
		}
		t.Keys = append(t.Keys, Key{Name: uniqueName(c.Username, 64, func(string) bool { return false }), SHA256: hex.EncodeToString(sum[:]), Plan: plan})
		n++
	}
	if len(t.APIKeyHeaders) == 0 {
		// The other limits count by address (or a header the rules
		// read): a key sent by anyone else must not make a client.
		t.KeysOnlyListed = true
	}
	t.APIKeyHeaders = t.kongKeyHeaders()
	return n
}
