package failover

import "github.com/sluice-dev/sluice"

// Direct reports whether the primary alone may decide checks now, as Apply
// would let it: the breaker of every node of theirs is closed, none of
// those nodes is returning to the primary (see Store), for all its keys
// or for those of the checks' limits, nor was for as long as a return
// call may still be charging, and this instance owes
// the primary nothing on their keys. A caller that reaches the primary around the Store — redis.Leased
// takes quota from Redis directly — asks first, and when Direct is false
// goes through Apply instead, which charges what is owed before the
// primary decides and returns as the Store's other calls do; otherwise
// the primary would decide on a state that lacks what the fallback
// admitted. Direct changes nothing: no breaker moves, no node is made.
// The zero Store is never direct.
func (f *Store) Direct(checks []sluice.Check) bool {
	if f.primary == nil {
		return false
	}
	recovering := f.charge != nil && f.ledger != nil
	owing := f.ledger != nil && f.ledger.size.Load() > 0
	for name := range f.nodeNames(checks) {
		n := f.nodes.lookup(name)
		if n == nil {
			if owing {
				return false // its first call may start a return period
			}
			continue
		}
		if n.breaker.State() != BreakerClosed {
			return false
		}
		if recovering && (n.fellBack.Load() || n.fresh.Load() && owing) {
			return false
		}
		// A return call in flight when the period ends has charged within
		// the bound drain waits for.
		if until := n.returnUntil.Load(); recovering && until != 0 && f.elapsed() < until+int64(f.chargeBound()) {
			return false
		}
	}
	if recovering && !f.marksDirect(checks) {
		return false
	}
	return !owing || !f.ledger.owesAny(checks)
}

// marksDirect reports whether no mark of the limits of checks (see mark)
// keeps them from the primary alone: none fell back, none is returning,
// nor was for as long as a return call may still be charging.
func (f *Store) marksDirect(checks []sluice.Check) bool {
	for i := range checks {
		c := &checks[i]
		name := f.nodeName(c)
		n := f.nodes.lookup(name)
		if n == nil {
			continue
		}
		k := n.marks.lookup(c.Limit.ID())
		if k == nil {
			continue
		}
		if until := k.returnUntil.Load(); k.fellBack.Load() || until != 0 && f.elapsed() < until+int64(f.chargeBound()) {
			return false
		}
	}
	return true
}

// lookup returns the node called name, or nil if none was made.
func (ns *nodes) lookup(name string) *node {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	if n := ns.m[name]; n != nil {
		return n
	}
	if len(ns.m) >= maxNodes {
		return ns.m[overflowNode]
	}
	return nil
}

// owesAny reports whether an account is open on the key and limit of one
// of checks.
func (lg *ledger) owesAny(checks []sluice.Check) bool {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for i := range checks {
		if _, ok := lg.m[stateKey{checks[i].Key, checks[i].Limit.ID()}]; ok {
			return true
		}
	}
	return false
}
