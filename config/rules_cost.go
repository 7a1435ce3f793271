package config

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/routes"
)

// ruleCostsHeld refuses, at its limits, a rule without cost: whose limit
// holds less than a plan's cost of a route the rule meets, or admits less
// at once while the store leases it (see leaseHold), and a rule without
// cost: that counts nothing (see ruleCounts). Such a rule charges its
// limits what the request costs (see httplimit.Rule's Cost), and a cost
// above a limit's burst (a leased bucket's shared burst) is never
// admitted, so those requests would all be refused.
// A rule meets a route when some request both pays the route's cost and
// is the rule's, as httplimit charges and matches it (see ruleJudge.meets):
// on every method of a route of none, in every reading that charges the
// cost (without a trailing slash, in lower case, without a format suffix),
// an Except entry leaving out only the requests it takes.
func (d *decoder) ruleCostsHeld(c *Config, raw *rawConfig) {
	charges := &plansCharges{plans: raw.plans, of: make([]*planCharges, len(raw.plans))}
	var exempt routes.Mux
	for _, e := range c.Exempt {
		_ = exempt.Handle(e) // a pattern ServeMux refuses is refused as an exempt route
	}
	for i, r := range c.Rules {
		loc, ok := raw.locs[fmt.Sprintf("Rules[%d].Limits", i)]
		if r.Cost != nil || !ok || raw.isPartial(fmt.Sprintf("Rules[%d].Limits", i)) {
			continue
		}
		j := &ruleJudge{rule: r, exempt: &exempt}
		if d.ruleCostHeld(c, raw, charges, j, loc) {
			d.ruleCounts(raw, charges, j, loc)
		}
	}
}

// ruleCostHeld refuses the rule of j, at loc, at the first plan's cost
// that one of its limits never admits (see ruleCostsHeld), and reports
// whether it did not.
func (d *decoder) ruleCostHeld(c *Config, raw *rawConfig, charges *plansCharges, j *ruleJudge, loc location) bool {
	r := j.rule
	for pi, rp := range raw.plans {
		if !r.AppliesTo(rp.plan.Name) {
			continue
		}
		for _, ep := range slices.Sorted(maps.Keys(rp.plan.Costs)) {
			cost := rp.plan.Costs[ep]
			l, found := belowCost(r, cost)
			h, leasedOut := leaseHold{}, false
			if !found {
				h, leasedOut = c.Store.refusedBy(cost, r.Name+".", r.Limits)
			}
			if !found && !leasedOut || !j.meets(charges.plan(pi), ep) {
				continue
			}
			line := costLine(rp, ep)
			if leasedOut {
				d.Errorf(loc.node, loc.path, "%q costs %d on plan %s (%s.costs, line %d), which the rule charges as it sets no cost, %s",
					ep, cost, rp.plan.Name, rp.path, line, h.why(cost, "give the rule a cost:"))
				return false
			}
			d.Errorf(loc.node, loc.path, "limit %s holds %d, less than the %d that %q costs on plan %s (%s.costs, line %d), "+
				"which the rule charges as it sets no cost: such requests could never be admitted "+
				"(give the rule a cost:, or the limit a burst of at least %d)",
				l.Name(), l.Burst(), cost, ep, rp.plan.Name, rp.path, line, cost)
			return false
		}
	}
	return true
}

// ruleCounts refuses, at loc, the rule of j (which sets no cost:) when it
// counts nothing: on every plan it applies to (one at least), each method
// and path of each of its alternatives lies within a route that the plan
// makes free (see freeRoute), some request of such a route is the rule's,
// and no request of a route of the plan that the rule meets (see
// ruleJudge.taken) pays more than 0. Its limits are charged 0 for each
// request it matches, and never count one. An alternative of no method
// is judged on every method, as ruleCostHeld judges it: beside a free
// "GET /v1/items" its POSTs, which no route prices, cost 1 and count.
func (d *decoder) ruleCounts(raw *rawConfig, charges *plansCharges, j *ruleJudge, loc location) {
	first, free := -1, ""
	for pi, rp := range raw.plans {
		if !j.rule.AppliesTo(rp.plan.Name) {
			continue
		}
		ep, ok := freeRoute(j.rule, rp.plan.Costs)
		if !ok {
			return
		}
		if zero, more := j.taken(charges.plan(pi)); !zero || more {
			return
		}
		if first < 0 {
			first, free = pi, ep
		}
	}
	if first < 0 {
		return
	}
	rp := raw.plans[first]
	d.Errorf(loc.node, loc.path, "count none of the requests the rule is written for: each of its routes is free on the plans "+
		"it applies to (%q costs 0 on plan %s, %s.costs, line %d), which the rule charges as it sets no cost (give the rule a cost:)",
		free, rp.plan.Name, rp.path, costLine(rp, free))
}

// freeRoute returns a route of costs that costs 0 and holds a path of
// r's (see freeRouteHolds), and whether every path of every alternative
// of r (an alternative of none: "/", every path), on each of its methods,
// lies within such a route.
func freeRoute(r httplimit.Rule, costs map[string]int64) (string, bool) {
	var free []string
	for _, ep := range slices.Sorted(maps.Keys(costs)) {
		if costs[ep] == 0 && routes.Check(ep) == nil {
			free = append(free, ep)
		}
	}
	if len(free) == 0 {
		return "", false
	}
	var named string
	for _, m := range r.Alternatives() {
		for _, p := range pathsOf(m) {
			i := slices.IndexFunc(free, func(ep string) bool { return freeRouteHolds(ep, m, p) })
			if i < 0 {
				return "", false
			}
			named = cmp.Or(named, free[i])
		}
	}
	return named, true
}

// freeRouteHolds reports whether the route ep holds the requests of the
// path p of m, an alternative of a rule, as written: ep's path holds p's
// paths (routes.PathWithin), ep has no host or it is each of m's, and ep
// has no method or each of m's is ep's (HEAD GET's): one of a method
// holds none of the requests of an alternative of no method, which takes
// every method.
func freeRouteHolds(ep string, m httplimit.Match, p string) bool {
	method, host, path := patternParts(routes.LowerHost(ep))
	if host != "" && (len(m.Hosts) == 0 || slices.ContainsFunc(m.Hosts, func(h string) bool {
		return strings.TrimRight(strings.ToLower(h), ".") != host
	})) {
		return false
	}
	if method != "" && (len(m.Methods) == 0 || slices.ContainsFunc(m.Methods, func(mt string) bool {
		mt = strings.ToUpper(mt)
		return mt != method && !(method == http.MethodGet && mt == http.MethodHead)
	})) {
		return false
	}
	return routes.PathWithin(p, path)
}

// plansCharges are the charges of each plan of plans (see planCharges),
// made once asked.
type plansCharges struct {
	plans []rawPlan
	of    []*planCharges
}

// plan returns the charges of plans[i].
func (pc *plansCharges) plan(i int) *planCharges {
	if pc.of[i] == nil {
		pc.of[i] = newPlanCharges(pc.plans[i].plan.Costs)
	}
	return pc.of[i]
}

// ruleJudge judges which routes of the plans' costs a rule meets, its
// patterns compiled once asked.
type ruleJudge struct {
	rule   httplimit.Rule
	exempt *routes.Mux
	routes *ruleRoutes
}

// meets reports whether some request pays what the pattern ep costs under
// pc and is the rule's, and is not exempt: a witness of ep and an
// alternative of the rule (see routeRequests).
func (j *ruleJudge) meets(pc *planCharges, ep string) bool {
	found := false
	j.witnesses(pc, ep, func(*http.Request) bool {
		found = true
		return false
	})
	return found
}

// taken reports whether, of the witnesses of the routes of pc that the
// rule meets, some pays 0 (zero) and some more (more).
func (j *ruleJudge) taken(pc *planCharges) (zero, more bool) {
	for _, ep := range slices.Sorted(maps.Keys(pc.costs)) {
		j.witnesses(pc, ep, func(req *http.Request) bool {
			if pc.cost(req) > 0 {
				more = true
			} else {
				zero = true
			}
			return !more
		})
		if more {
			break
		}
	}
	return zero, more
}

// witnesses calls yield for each witness of ep and an alternative of the
// rule (see routeRequests) that pays what ep costs under pc, is the
// rule's and is not exempt, until yield returns false.
func (j *ruleJudge) witnesses(pc *planCharges, ep string, yield func(*http.Request) bool) {
	if routes.Check(ep) != nil {
		return
	}
	if j.routes == nil {
		j.routes = newRuleRoutes(j.rule)
	}
	for _, m := range j.rule.Alternatives() {
		for _, req := range routeRequests(m, ep) {
			if pc.charges(req, ep) && !j.exempt.MatchesAsWritten(req) && j.routes.takes(req) && !yield(req) {
				return
			}
		}
	}
}

// costLine returns the line of the plan's cost ep, 0 when unknown.
func costLine(rp rawPlan, ep string) int {
	if n := rp.costNodes[ep]; n != nil {
		return n.Line
	}
	return 0
}

// belowCost returns the first valid limit of r that holds less than cost.
func belowCost(r httplimit.Rule, cost int64) (sluice.Limit, bool) {
	for _, l := range r.Limits {
		if l.Err() == nil && cost > l.Burst() {
			return l, true
		}
	}
	return sluice.Limit{}, false
}

// handlesWith registers h for pattern in mux, reporting false if mux
// refuses the pattern (see handles).
func handlesWith(mux *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() { ok = recover() == nil }()
	mux.Handle(pattern, h)
	return true
}
