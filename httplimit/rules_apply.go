package httplimit

import (
	"net/http"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/quota"
)

// matchRules sets res.matched, res.ruleKeys and res.ruleCosts to the rules
// that the request of f matches (res.Cost set), in rule order, and the
// store key and cost of each one's checks.
func (m *Middleware) matchRules(f *requestFacts, res *Result) {
	res.matched, res.ruleKeys, res.ruleCosts = res.matched[:0], res.ruleKeys[:0], res.ruleCosts[:0]
	if len(m.rules) == 0 {
		return
	}
	f.path = cleanPath(f.r.URL.Path)
	for _, ru := range m.rules {
		var pm pathMatch
		pat, ok := ru.matches(f.r, f.path, &pm)
		if !ok {
			continue
		}
		key, ok := m.ruleKey(ru, f, pat, &pm)
		if !ok {
			continue
		}
		cost := ru.cost
		if cost < 0 {
			cost = res.Cost
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
	for _, ru := range res.matched {
		for _, rl := range ru.limits {
			if rl.Name() == l.Name() {
				return ru.name
			}
		}
	}
	return ""
}

// ruleItems returns the RateLimit items and quotas of res's checks (see
// policyHeaders), those of its plan ps and of its matched rules, in the
// order of res.Checks: the plan's, the rules', the global ones. They are
// kept in res for its next request.
func (res *Result) ruleItems(ps *planState) ([]string, []quota.Quota) {
	n := len(ps.plan.Limits)
	res.items = append(res.items[:0], ps.headers.items[:n]...)
	res.quotas = append(res.quotas[:0], ps.headers.quotas[:n]...)
	for _, ru := range res.matched {
		res.items = append(res.items, ru.policy.items...)
		res.quotas = append(res.quotas, ru.policy.quotas...)
	}
	res.items = append(res.items, ps.headers.items[n:]...)
	res.quotas = append(res.quotas, ps.headers.quotas[n:]...)
	if len(res.items) != len(res.Checks) {
		return nil, nil // not res's checks: read them one by one
	}
	return res.items, res.quotas
}

// writeAllHeaders is writeHeaders with the matched rules' limits added to
// RateLimit-Policy (RateLimit already has one item per check).
func (m *Middleware) writeAllHeaders(h http.Header, res *Result) {
	m.writeHeaders(h, res)
	if len(res.matched) == 0 {
		return
	}
	ietf, policy := false, false
	for _, mode := range m.modes {
		ietf = ietf || mode == ModeIETF
		policy = policy || mode != ModeLegacy
	}
	if !policy {
		return
	}
	var arr [1024]byte
	buf := arr[:0]
	if base := h["Ratelimit-Policy"]; len(base) == 1 {
		buf = append(buf, base[0]...)
	}
	for _, ru := range res.matched {
		v := ru.policy.draft
		if ietf {
			v = ru.policy.ietf
		}
		if len(v) == 0 {
			continue // every limit of the rule is hidden
		}
		if len(buf) > 0 {
			buf = append(buf, ", "...)
		}
		buf = append(buf, v[0]...)
	}
	if len(buf) == 0 {
		return
	}
	ends := [1]int{len(buf)}
	h["Ratelimit-Policy"] = res.headerValues(buf, ends[:])[0:1:1]
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
