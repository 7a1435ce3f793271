// Costs judged against the burst a leased bucket's shared state decides by.

package config

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// leaseHold is how the store decides a bucket it leases from Redis: every
// check by shared, the limit with its burst less what refills in a lease's
// life (see leasehold.Of), so that a cost above shared's
// burst is never admitted, though the limit itself holds it.
type leaseHold struct {
	limit, shared sluice.Limit
	life, maxAge  time.Duration
}

// leaseHoldOf returns how s decides l, whose state the store keeps under
// idPrefix and its ID (see limitsUnder), when s leases it: the store is
// Redis, l's lease: (else the store's) is auto, and l is a bucket that
// leases (leasehold.Of).
func (s *Store) leaseHoldOf(l sluice.Limit, idPrefix string) (leaseHold, bool) {
	if s.Type != "redis" || l.Err() != nil || !leased(&s.Redis, []string{idPrefix + l.ID()}) {
		return leaseHold{}, false
	}
	maxAge := cmp.Or(s.Redis.LeaseMaxAge, leasehold.DefaultMaxAge)
	shared, life, ok := leasehold.Of(l, maxAge)
	return leaseHold{limit: l, shared: shared, life: life, maxAge: maxAge}, ok
}

// refuses reports whether a check of cost, which the limit holds (a cost
// above its burst is refused as such elsewhere), is never admitted while
// leased.
func (h leaseHold) refuses(cost int64) bool {
	return cost <= h.limit.Burst() && cost > h.shared.Burst()
}

// why says, after a cost h refuses, why it is never admitted and what
// would admit it: remedies first, if any, then lease: off or a larger
// burst.
func (h leaseHold) why(cost int64, remedies ...string) string {
	l, b := h.limit, h.limit.Burst()
	remedies = append(remedies, "set lease: off on the limit")
	if least := h.leastBurst(cost); least > 0 {
		remedies = append(remedies, fmt.Sprintf("give it a burst of at least %d", least))
	}
	remedy := strings.Join(remedies, ", ")
	if n := len(remedies); n > 1 {
		remedy = strings.Join(remedies[:n-1], ", ") + ", or " + remedies[n-1]
	}
	return fmt.Sprintf("more than limit %s admits at once while leased from Redis (lease: auto): its shared state decides every "+
		"check with a burst of %d, its %d less the %d it holds back (what refills in a lease's life, %v), and such requests "+
		"could never be admitted (%s)", l.Name(), h.shared.Burst(), b, b-h.shared.Burst(), h.life, remedy)
}

// leastBurst returns the least burst with which the limit, leased as h,
// admits cost, or 0 when none does. The hold-back grows with the burst,
// never faster: a burst short by d units needs at least d more, and the
// shortfall shrinks at each step.
func (h leaseHold) leastBurst(cost int64) int64 {
	b := cost
	for range 64 {
		l := h.limit.WithBurst(b)
		if l.Err() != nil {
			return 0
		}
		shared, _, ok := leasehold.Of(l, h.maxAge)
		if !ok || shared.Burst() >= cost {
			return b
		}
		b += cost - shared.Burst()
	}
	return 0
}

// leasedCostsHeld refuses, at its line, a cost that a limit it is charged
// to holds but never admits while the store leases the limit from Redis:
// a plan's cost against the plan's and the global limits, against a key's
// own limits, and a rule's cost: against the rule's limits. (A rule
// without cost: charges the plans' costs: see ruleCostsHeld.)
func (d *decoder) leasedCostsHeld(c *Config, raw *rawConfig) {
	s := &c.Store
	if s.Type != "redis" {
		return
	}
	for _, rp := range raw.plans {
		for _, ep := range slices.Sorted(maps.Keys(rp.plan.Costs)) {
			cost := rp.plan.Costs[ep]
			if h, ok := s.refusedBy(cost, "", rp.plan.Limits, c.Policy.Global); ok {
				d.Errorf(rp.costNodes[ep], rp.path+".costs."+ep, "costs %d, %s", cost, h.why(cost))
			}
		}
	}
	for _, rk := range raw.keys {
		if rk.key == nil || rk.key.Plan == nil || len(rk.overrides) == 0 {
			continue
		}
		for _, ep := range slices.Sorted(maps.Keys(rk.key.Plan.Costs)) {
			cost := rk.key.Plan.Costs[ep]
			if h, ok := s.refusedBy(cost, "", rk.overrides); ok {
				n, path, _ := keyLimitNode(rk, h.limit.Name())
				d.errorfIn(rk.file, n, path, "%q costs %d on the key's plan, %s", ep, cost, h.why(cost))
			}
		}
	}
	for i, r := range c.Rules {
		loc, ok := raw.locs[fmt.Sprintf("Rules[%d].Cost", i)]
		if r.Cost == nil || !ok {
			continue
		}
		if h, ok := s.refusedBy(*r.Cost, r.Name+".", r.Limits); ok {
			d.Errorf(loc.node, loc.path, "%d, %s", *r.Cost, h.why(*r.Cost))
		}
	}
}

// refusedBy returns how s leases the first limit of lists, whose states
// the store keeps under idPrefix, that holds cost but never admits it
// while leased (see leaseHold.refuses).
func (s *Store) refusedBy(cost int64, idPrefix string, lists ...[]sluice.Limit) (leaseHold, bool) {
	for _, ls := range lists {
		for _, l := range ls {
			if h, ok := s.leaseHoldOf(l, idPrefix); ok && h.refuses(cost) {
				return h, true
			}
		}
	}
	return leaseHold{}, false
}
