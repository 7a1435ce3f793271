package httplimit

import (
	"sync"
	"sync/atomic"
)

// maxRuleHeaders bounds the sets of matched rules whose headers a plan
// keeps; the headers of further sets are built for each request.
const maxRuleHeaders = 256

// ruleHeaders are the policy headers of one plan with each set of its
// rules that has matched a request so far, by the set's mask (bit i: the
// i-th rule of the middleware), each built once. Lookups take no lock; it
// is safe for concurrent use.
type ruleHeaders struct {
	sets atomic.Pointer[map[uint64]*policyHeaders] // replaced, never written
	mu   sync.Mutex                                // serialises additions
}

// headersOf returns the policy headers of the checks of res, a request on
// plan ps (res.matched and res.ruleMask set): the plan's limits, those of
// the rules that matched in order, the global ones.
func (m *Middleware) headersOf(ps *planState, res *Result) *policyHeaders {
	if len(res.matched) == 0 || ps.plan == nil { // no plan: no headers of its own
		return &ps.headers
	}
	mask, rh := res.ruleMask, &ps.withRules
	cacheable := len(m.rules) <= 64 // a mask names a set of rules
	if sets := rh.sets.Load(); sets != nil && cacheable {
		if ph := (*sets)[mask]; ph != nil {
			return ph
		}
	}
	n := len(ps.plan.Limits)
	parts := []*policyHeaders{ps.headers.part(0, n)}
	for _, ru := range res.matched {
		parts = append(parts, &ru.policy)
	}
	ph := concat(append(parts, ps.headers.part(n, len(ps.headers.items)))...)
	if !cacheable {
		return ph
	}
	rh.mu.Lock()
	defer rh.mu.Unlock()
	var old map[uint64]*policyHeaders
	if p := rh.sets.Load(); p != nil {
		old = *p
	}
	if o := old[mask]; o != nil {
		return o
	}
	if len(old) >= maxRuleHeaders {
		return ph
	}
	sets := make(map[uint64]*policyHeaders, 1+len(old))
	for k, v := range old {
		sets[k] = v
	}
	sets[mask] = ph
	rh.sets.Store(&sets)
	return ph
}
