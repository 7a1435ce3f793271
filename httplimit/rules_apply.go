package httplimit

import (
	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/routes"
)

// matchRules sets res.matched, res.ruleKeys and res.ruleCosts to the rules
// that the request of f matches (res.Cost set), in rule order, and the
// store key and cost of each one's checks: a rule's own cost, else
// res.Cost, and 0 for every rule when f is a peek, which spends nothing of
// any limit. res.ruleMask has bit i set for the i-th rule of m.rules that
// matched (of the first 64), and res.sharedMask bit j for the j-th of
// res.matched whose key holds nothing of the client's (see ruleKey): a
// plan's checks, its rules' limits included, are at most
// sluice.MaxChecks, so at most 64 rules match.
func (m *Middleware) matchRules(f *requestFacts, res *Result) {
	res.matched, res.ruleKeys, res.ruleCosts = res.matched[:0], res.ruleKeys[:0], res.ruleCosts[:0]
	res.ruleMask, res.sharedMask = 0, 0
	if len(m.rules) == 0 {
		return
	}
	f.path = routes.CleanPath(f.r.URL.Path)
	rd := newPathReadings(f.r, f.path)
	plan := res.Identity.Plan.Name
	for i, ru := range m.rules {
		if !ru.appliesTo(plan) {
			continue
		}
		var pm pathMatch
		pat, ok := ru.matches(f.r, &rd, &pm)
		if !ok {
			continue
		}
		key, shared, ok := m.ruleKey(ru, f, pat, &pm, res)
		if !ok {
			continue
		}
		cost := ru.cost
		switch {
		case f.peek:
			cost = 0
		case cost < 0:
			cost = res.Cost
		}
		res.ruleMask |= 1 << i
		if shared {
			res.sharedMask |= 1 << len(res.matched)
		}
		res.matched = append(res.matched, ru)
		res.ruleKeys = append(res.ruleKeys, key)
		res.ruleCosts = append(res.ruleCosts, cost)
	}
}

// Rules returns the names of the rules that applied to res, in order.
func (res *Result) Rules() []string {
	names := make([]string, len(res.matched))
	for i, ru := range res.matched {
		names[i] = ru.name
	}
	return names
}

// ruleOf returns the name of the rule whose limit l is, or "" for a plan's
// or global limit.
func (res *Result) ruleOf(l sluice.Limit) string {
	if ru := res.ruleNamed(l.Name()); ru != nil {
		return ru.name
	}
	return ""
}

// ruleNamed returns the matched rule with a limit named name, or nil for a
// plan's or global limit.
func (res *Result) ruleNamed(name string) *rule {
	for _, ru := range res.matched {
		for _, rl := range ru.limits {
			if rl.Name() == name {
				return ru
			}
		}
	}
	return nil
}

// shared reports whether the attribute is one every client shares: the
// host, the route, the rule, the path or a path wildcard.
func (kp *keyPart) shared() bool {
	switch kp.kind {
	case KeyHost, KeyRoute, KeyRule, KeyURLPath, KeyPath:
		return true
	}
	return false
}

// hiddenLimits returns the names of the limits whose RateLimit items and
// policies are not sent: Options.HiddenLimits, a rule's name standing for
// each of its limits.
func hiddenLimits(o *Options) map[string]bool {
	hidden := map[string]bool{}
	for _, name := range o.HiddenLimits {
		hidden[name] = true
		for _, r := range o.Rules {
			if r.Name != name {
				continue
			}
			for _, l := range r.Limits {
				hidden[ruleLimit(r.Name, l).Name()] = true
			}
		}
	}
	return hidden
}
