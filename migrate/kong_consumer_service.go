package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/routes"
)

// kongConsumerService is a rate-limiting plugin that names a consumer and
// a service (each by name or id), and where the report names it. Kong runs
// it on that consumer's requests to the service's routes, in place of
// every other rate-limiting plugin there (the consumer's own, its group's,
// the route's, the service's, the global one), and counts them together.
type kongConsumerService struct {
	consumer, service kongServiceRef
	plugin            kongPlugin
	where             string
}

// sha256Hex returns the hex SHA-256 of key, as keys: lists a key.
func sha256Hex(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// isKongLimit reports whether p is a rate-limiting or
// rate-limiting-advanced plugin, enabled or not.
func isKongLimit(p kongPlugin) bool {
	return p.Name == "rate-limiting" || p.Name == "rate-limiting-advanced"
}

// kongConsumerServices makes a rule of each plugin of f.consumerServices:
// it matches the service's routes on which Kong names a consumer (each
// route's own hosts, paths and methods, kongRouteGroups), for the plan of
// the consumer's keys only, keyed as the plugin's limit_by says; the other
// limits of that plan leave those routes out. The rule leaves out the
// paths Kong's router gives to routes of other services
// (kongLeaveOutRivals). A consumer without a plan of its own (own:
// username → the plan of its own plugin) is given one, which has the
// limits it had before: its group's, or the imported plan's.
func (t *Translation) kongConsumerServices(f *kongFile, own map[string]string) error {
	globalAuth := slices.ContainsFunc(f.Plugins, isKongAuth)
	is := func(name, id string, ref kongServiceRef) bool {
		return string(ref) == name && name != "" || string(ref) == id && id != ""
	}
	var places []kongPlace // every route's, once a plugin needs them
	for _, cs := range f.consumerServices {
		p, ok := kongLimitPlugin([]kongPlugin{cs.plugin})
		if !ok {
			t.same(cs.where, "a disabled %s plugin: not imported.", cs.plugin.Name)
			continue
		}
		ci := slices.IndexFunc(f.Consumers, func(c kongConsumer) bool { return is(c.Username, c.ID, cs.consumer) })
		si := slices.IndexFunc(f.Services, func(s kongService) bool { return is(s.Name, s.ID, cs.service) })
		if ci < 0 || si < 0 {
			t.differs(cs.where, "it names consumer %s and service %s, which the file does not both hold: not imported (import the file with them).", cs.consumer, cs.service)
			continue
		}
		c, s := f.Consumers[ci], f.Services[si]
		var ms []kongMatch
		for _, r := range s.Routes {
			if t.kongAnonymous || globalAuth || r.authenticated {
				ms = append(ms, t.kongRouteMatch(r, cs.where+" route "+r.Name))
			}
		}
		if len(ms) == 0 {
			t.same(cs.where, "no authentication plugin runs on the routes of service %s, so Kong never names consumer %s there and never runs the plugin: not imported.", s.Name, c.Username)
			continue
		}
		if t.kongAnonymous {
			t.differs(cs.where, "no authentication plugin in the file names a consumer, so Kong never ran it; sluice applies it to the keys listed for %s. Import the file with its authentication plugin, or delete that rule.", c.Username)
		}
		plan, mirror := t.kongConsumerPlanOf(c, own, cs.where)
		sc := kongScope{where: cs.where, name: plan, config: p.Config}
		ls, err := t.kongPeriods(sc, func(n string) string { return n })
		if err != nil {
			return err
		}
		if p.Config.LimitBy == "path" {
			t.differs(cs.where, "limit_by path: Kong counts the requests on path %s together; the rule counts %s's requests per address on every path of its routes.", p.Config.Path, c.Username)
		}
		r := Rule{Name: "consumer-" + c.Username + "-" + s.Name, Plans: []string{plan}, Limits: ls}
		if err := t.kongRuleKey(sc, &r); err != nil {
			return err
		}
		names := t.kongMatchRules(r, kongRouteGroups(ms), cs.where)
		if len(names) == 0 {
			t.differs(cs.where, "the paths of service %s's routes are regular expressions, which a rule cannot match: not imported.", s.Name)
			continue
		}
		// Kong runs it on the requests its router gives the service's
		// routes: the rule leaves out the paths it gives other routes.
		if places == nil {
			places = kongRivals(slices.Concat(serviceRoutes(f.Services), f.Routes), func(int) bool { return false })
		}
		rivals := slices.DeleteFunc(slices.Clone(places), func(p kongPlace) bool {
			return slices.ContainsFunc(s.Routes, func(sr kongRoute) bool { return sr.at == p.route.at })
		})
		if at := slices.IndexFunc(t.SluiceRules, func(q Rule) bool { return q.Name == names[0] }); at >= 0 {
			t.kongLeaveOutRivals(at, rivals, cs.where)
		}
		t.same(cs.where, "Kong runs it on %s's requests to the routes of service %s, in place of every other rate-limiting plugin there, one count for them: rule %s matches those routes for plan %s (%s's keys) alone, and the other limits of plan %s leave them out.",
			c.Username, s.Name, strings.Join(names, ", rule "), plan, c.Username, plan)
		t.kongLeaveOutForPlan(plan, names, mirror, cs.where)
	}
	return nil
}

// kongConsumerPlanOf returns the plan of consumer c's keys that is c's
// alone, making one when c has none (own: username → such a plan): it
// holds what c had, its consumer group's limits (and the group's rules) or
// the imported plan's (and the rules of the imported plan's clients). mirror
// reports that the plan holds the imported plan's limits, which that plan's
// costs apply to.
func (t *Translation) kongConsumerPlanOf(c kongConsumer, own map[string]string, where string) (plan string, mirror bool) {
	if p, ok := own[c.Username]; ok {
		return p, false
	}
	name := uniqueName("consumer-"+c.Username, 56, func(n string) bool {
		return n == PlanName || slices.ContainsFunc(t.Plans, func(p Plan) bool { return p.Name == n })
	})
	own[c.Username] = name
	from := PlanName
	var ls []Limit
	for _, k := range t.Keys {
		if i := slices.IndexFunc(c.Credentials, func(cr kongCredential) bool { return cr.Key != "" && sha256Hex(cr.Key) == k.SHA256 }); i >= 0 {
			from = k.Plan
			break
		}
	}
	if from == PlanName {
		for _, l := range t.Limits {
			if !l.Global {
				ls = append(ls, l)
			}
		}
		mirror = true
	} else if i := slices.IndexFunc(t.Plans, func(p Plan) bool { return p.Name == from }); i >= 0 {
		ls = slices.Clone(t.Plans[i].Limits)
	}
	if len(ls) == 0 {
		ls = []Limit{{Name: unlimited, Algorithm: "fixed-window", Quantity: sluice.MaxQuantity, Window: time.Second, Shadow: true,
			Source: where + ": the plan's limits are rules"}}
	}
	t.Plans = append(t.Plans, Plan{Name: name, Limits: ls})
	for i := range t.SluiceRules {
		if r := &t.SluiceRules[i]; slices.Contains(r.Plans, from) {
			r.Plans = append(r.Plans, name)
		}
	}
	if from == PlanName {
		if n := t.kongListKeys(c, name, where); n == 0 {
			t.differs(where, "the file has no key-auth credential of %s: list its keys under keys: (by SHA-256) with plan: %s.", c.Username, name)
		} else if n > 1 {
			t.differs(where, "the consumer's %d credentials shared one count in Kong; in sluice each key counts alone.", n)
		}
	} else {
		for i := range t.Keys {
			if t.Keys[i].Plan == from && slices.ContainsFunc(c.Credentials, func(cr kongCredential) bool { return cr.Key != "" && sha256Hex(cr.Key) == t.Keys[i].SHA256 }) {
				t.Keys[i].Plan = name
			}
		}
	}
	t.same(where, "%s's keys choose plan %s, which holds the limits plan %s gave them, the rule of this plugin besides.", c.Username, name, from)
	return name, mirror
}

// kongLeaveOutForPlan makes every limit of plan other than rules names
// leave out the paths those rules match: the plan's own limits become a
// rule (on the paths the imported plan's costs charge, for a mirror of
// it) that leaves them out, a rule of that plan alone leaves them out,
// and a rule of several plans is one rule for the others and one for
// plan, which leaves them out: a rule leaves paths out for all its plans
// alike. Where such a rule counts several clients together (key rule, an
// address, a header; kongSharedKey), the copy counts plan's other
// requests apart from the others', reported at where; so are a global
// limit and paths a rule cannot leave out. A rule covering a route below
// those paths, which except_paths would leave out too, keeps its other
// paths alone where that is exact (kongLeaveOutByPaths).
func (t *Translation) kongLeaveOutForPlan(plan string, names []string, mirror bool, where string) {
	var theirs []string  // the path patterns of rules names
	var ours []RuleMatch // the alternatives of rules names
	// back are the patterns rules names leave out for other routes, where
	// the plan's other limits apply (those of routes without
	// authentication are the rules' of every plan).
	var back []string
	for _, r := range t.SluiceRules {
		if slices.Contains(names, r.Name) {
			for _, a := range r.alternatives() {
				ours = append(ours, a)
				for _, p := range a.Paths {
					if !slices.Contains(theirs, p) {
						theirs = append(theirs, p)
					}
				}
				for _, e := range a.ExceptPaths {
					if !slices.Contains(t.kongUnauthPaths, e) && !slices.Contains(back, e) {
						back = append(back, e)
					}
				}
			}
		}
	}
	pi := slices.IndexFunc(t.Plans, func(p Plan) bool { return p.Name == plan })
	if pi < 0 {
		return
	}
	if pl := &t.Plans[pi]; !slices.ContainsFunc(pl.Limits, func(l Limit) bool { return l.Name == unlimited }) {
		r := Rule{Name: t.ruleName(plan), Plans: []string{plan}, Key: []string{"client"}, Limits: pl.Limits}
		if mirror && t.Costs["/"] == 0 && len(t.Costs) > 0 {
			for p, cost := range t.Costs {
				if cost > 0 {
					r.Paths = append(r.Paths, p)
				}
			}
			slices.Sort(r.Paths)
		}
		t.SluiceRules = append(t.SluiceRules, r)
		pl.Limits = []Limit{{Name: unlimited, Algorithm: "fixed-window", Quantity: sluice.MaxQuantity, Window: time.Second, Shadow: true,
			Source: where + ": the plan's limits are rule " + r.Name}}
		t.same(where, "the limits of plan %s are rule %s (key client), which can leave out the routes of this plugin.", plan, r.Name)
	}
	meets := func(r Rule) bool {
		return slices.ContainsFunc(r.alternatives(), func(m RuleMatch) bool {
			return slices.ContainsFunc(ours, func(o RuleMatch) bool {
				return !disjoint(o.Hosts, o.Methods, m.Hosts, m.Methods) && (len(m.Paths) == 0 || len(o.Paths) == 0 ||
					slices.ContainsFunc(m.Paths, func(p string) bool {
						return slices.ContainsFunc(o.Paths, func(q string) bool { return routes.PathsOverlap(p, q) })
					}))
			})
		})
	}
	leaveOutOne := func(r *Rule) bool {
		paths, except, some := len(r.Paths), len(r.ExceptPaths), true // some: r left some paths out by except_paths
		if !r.leaveOut(theirs, r.Paths) {
			if !kongLeaveOutByPaths(r, theirs, ours) {
				t.differs(where, "rule %s of plan %s cannot leave out the paths of this plugin's routes (except_paths) without a route below them that it covers: the plan's requests there count against it too.", r.Name, plan)
				return false
			}
			if len(r.Paths) < paths {
				t.same(where, "rule %s of plan %s matches only its paths other than this plugin's routes' (%s), as except_paths would leave out the routes below them too.", r.Name, plan, strings.Join(r.Paths, ", "))
			}
			some = len(r.ExceptPaths) > except
		}
		if some && slices.ContainsFunc(ours, func(o RuleMatch) bool { return len(o.Hosts) > 0 && !covers(o.Hosts, nil, r.Hosts, nil) }) {
			t.differs(where, "rule %s of plan %s leaves out the paths of this plugin's routes (except_paths) on every host, where those routes match some hosts only: the plan's requests on those paths to other hosts are not counted by it.", r.Name, plan)
		}
		return true
	}
	// leaveOut leaves the plugin's routes out of r (each alternative of a
	// rule of several) and reports whether it could.
	leaveOut := func(r *Rule) bool {
		if kongPlanExcept(r, ours) {
			t.same(where, "rule %s of plan %s leaves out the requests of this plugin's routes on their own hosts and methods (except:), where they match some hosts only.", r.Name, plan)
			return true
		}
		before := r.alternatives()
		for j := range before {
			before[j].ExceptPaths = slices.Clone(before[j].ExceptPaths)
		}
		ok := true
		if len(r.Any) == 0 {
			ok = leaveOutOne(r)
		} else {
			for j := range r.Any {
				a := &r.Any[j]
				q := Rule{Name: r.Name, Paths: a.Paths, Hosts: a.Hosts, Methods: a.Methods, ExceptPaths: a.ExceptPaths}
				ok = leaveOutOne(&q) && ok
				a.Paths, a.ExceptPaths = q.Paths, q.ExceptPaths
			}
		}
		kongKeepBack(r, before, back)
		return ok
	}
	for i, n := 0, len(t.SluiceRules); i < n; i++ {
		r := &t.SluiceRules[i]
		if slices.Contains(names, r.Name) || r.everyPlan || len(r.Plans) > 0 && !slices.Contains(r.Plans, plan) || !meets(*r) {
			continue
		}
		if slices.Equal(r.Plans, []string{plan}) {
			leaveOut(r)
			continue
		}
		q := *r
		q.Name, q.Plans, q.ExceptPaths, q.Paths = t.ruleName(r.Name+"-"+plan), []string{plan}, slices.Clone(r.ExceptPaths), slices.Clone(r.Paths)
		q.Any = slices.Clone(r.Any)
		for j := range q.Any {
			q.Any[j].ExceptPaths = slices.Clone(q.Any[j].ExceptPaths)
		}
		r = &t.SluiceRules[i]
		if len(r.Plans) == 0 {
			r.Plans = []string{PlanName}
			for _, p := range t.Plans {
				if p.Name != plan {
					r.Plans = append(r.Plans, p.Name)
				}
			}
		} else {
			r.Plans = slices.DeleteFunc(slices.Clone(r.Plans), func(p string) bool { return p == plan })
		}
		left := leaveOut(&q)
		t.SluiceRules = append(t.SluiceRules, q)
		copied := fmt.Sprintf("plan %s has a copy of it, %s, which leaves out this plugin's routes", plan, q.Name)
		if !left {
			copied = fmt.Sprintf("plan %s has a copy of it, %s, which cannot leave out all of this plugin's routes (above)", plan, q.Name)
		}
		if kongSharedKey(q.Key) {
			if left {
				copied += ", so that Kong's count of them is this plugin's alone"
			}
			t.differs(where, "rule %s counts the requests of plan %s together with other clients' (key %s), and a rule leaves paths out for all its plans alike: %s; the copy counts the plan's other requests apart from the other plans' clients, where Kong counted them together, so one %s may have the rule's limits once for plan %s and once for the others.", r.Name, plan, strings.Join(r.Key, ", "), copied, kongSharedKeyNoun(q.Key), plan)
			continue
		}
		t.same(where, "rule %s counts each client apart: %s.", r.Name, copied)
	}
	if slices.ContainsFunc(t.Limits, func(l Limit) bool { return l.Global }) {
		t.differs(where, "the global limits count the requests of plan %s on this plugin's routes too, where Kong runs only this plugin.", plan)
	}
}

// kongLeaveOutByPaths leaves theirs, the path patterns of a plugin's
// routes (of ours, their matches), out of r where except_paths cannot, a
// pattern of r's lying below one of theirs: r keeps only its patterns
// other than theirs and leaves out (except_paths) those of theirs below
// them. That is exact only where the plugin's routes take none of the
// requests r keeps and all of those r drops: each match of ours holding a
// pattern of r's covers r's hosts and methods and names no header, and
// each match of ours above a pattern r keeps leaves it out (a route Kong's
// router gives it before the plugin's). It reports whether it did; r is
// left as it was when it did not (nor when r would keep no pattern).
func kongLeaveOutByPaths(r *Rule, theirs []string, ours []RuleMatch) bool {
	kept := slices.DeleteFunc(slices.Clone(r.Paths), func(p string) bool { return slices.Contains(theirs, p) })
	if len(kept) == 0 {
		return false
	}
	inexact := func(o RuleMatch) bool {
		if slices.ContainsFunc(o.Paths, func(p string) bool { return slices.Contains(r.Paths, p) }) &&
			(len(o.Headers) > 0 || !covers(o.Hosts, o.Methods, r.Hosts, r.Methods)) {
			return true
		}
		return slices.ContainsFunc(kept, func(p string) bool {
			return slices.ContainsFunc(o.Paths, func(q string) bool { return below(p, q) }) &&
				!slices.ContainsFunc(o.ExceptPaths, func(e string) bool { return e == p || below(p, e) })
		})
	}
	if slices.ContainsFunc(ours, inexact) {
		return false
	}
	q := Rule{ExceptPaths: slices.Clone(r.ExceptPaths)}
	if !q.leaveOut(belowAny(theirs, kept), kept) {
		return false
	}
	r.Paths, r.ExceptPaths = kept, q.ExceptPaths
	return true
}

// kongSharedKey reports whether a rule of key counts several clients'
// requests together (an address, a header, one count for the rule), not
// each client apart (client, api_key).
func kongSharedKey(key []string) bool {
	return len(key) > 1 || len(key) == 1 && key[0] != "client" && key[0] != "api_key"
}

// kongSharedKeyNoun names what a rule of key (kongSharedKey) counts
// together: "address", "value of X-Tenant", or "count" (key rule and the
// others).
func kongSharedKeyNoun(key []string) string {
	if len(key) == 1 && strings.HasPrefix(key[0], "ip") {
		return "address"
	}
	if h, ok := strings.CutPrefix(key[0], "header:"); ok && len(key) == 1 {
		return "value of " + h
	}
	return "count"
}

// kongKeepBack gives rule r, whose matches were before (its alternatives)
// until it left out the paths of a plugin's routes, an alternative of each
// of those matches for the patterns of back within it that it did not
// leave out before: the plugin's rule leaves them out in turn, for other
// routes, where r applies as it did.
func kongKeepBack(r *Rule, before []RuleMatch, back []string) {
	var add []RuleMatch
	for _, b := range before {
		m := RuleMatch{Hosts: b.Hosts, Methods: b.Methods, Headers: b.Headers}
		for _, e := range back {
			within := len(b.Paths) == 0 || slices.ContainsFunc(b.Paths, func(p string) bool { return p == e || below(e, p) })
			if within && !slices.ContainsFunc(b.ExceptPaths, func(x string) bool { return x == e || below(e, x) }) {
				m.Paths = append(m.Paths, e)
			}
		}
		if len(m.Paths) == 0 {
			continue
		}
		for _, x := range b.ExceptPaths {
			if slices.ContainsFunc(m.Paths, func(e string) bool { return below(x, e) }) {
				m.ExceptPaths = append(m.ExceptPaths, x)
			}
		}
		add = append(add, m)
	}
	if len(add) == 0 {
		return
	}
	if len(r.Any) == 0 {
		r.Any = r.alternatives()
		r.Paths, r.Hosts, r.Methods, r.Headers, r.ExceptPaths = nil, nil, nil, nil, nil
	}
	r.Any = append(r.Any, add...)
}

// kongPlanExcept leaves ours, the matches of a plugin's rules that match
// some hosts only, out of r by except entries (kongExcept: each of its
// paths on its hosts and methods), where that is exact and except_paths
// is not: a match of r meets hosts that none of ours covers, no match of
// ours leaves paths out (an except entry cannot) or names a header, and no
// pattern of r's lies below one of ours. It reports whether it did; r is
// left as it was when it did not.
func kongPlanExcept(r *Rule, ours []RuleMatch) bool {
	partial := slices.ContainsFunc(ours, func(o RuleMatch) bool {
		return len(o.Hosts) > 0 && slices.ContainsFunc(r.alternatives(), func(a RuleMatch) bool { return !covers(o.Hosts, nil, a.Hosts, nil) })
	})
	if !partial || slices.ContainsFunc(ours, func(o RuleMatch) bool { return len(o.ExceptPaths) > 0 || len(o.Headers) > 0 || len(o.Paths) == 0 }) {
		return false
	}
	q := Rule{Except: slices.Clone(r.Except)}
	for i := range q.Except {
		q.Except[i].Paths, q.Except[i].Hosts = slices.Clone(q.Except[i].Paths), slices.Clone(q.Except[i].Hosts)
	}
	for _, o := range ours {
		if !slices.ContainsFunc(r.alternatives(), func(a RuleMatch) bool {
			return !disjoint(o.Hosts, o.Methods, a.Hosts, a.Methods) && (len(a.Paths) == 0 || len(overlapping(o.Paths, a.Paths)) > 0)
		}) {
			continue // none of r's requests: an entry of it would leave out nothing
		}
		for _, a := range r.alternatives() {
			if slices.ContainsFunc(o.Paths, func(p string) bool {
				return slices.ContainsFunc(a.Paths, func(own string) bool { return below(own, p) })
			}) {
				return false
			}
		}
		if !q.kongExcept(-1, o.Paths, o.Hosts, o.Methods, nil, true) {
			return false
		}
	}
	r.Except = q.Except
	return true
}
