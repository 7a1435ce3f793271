package sluice

// DecideBatch applies the all-or-nothing rule of Store.Apply to states that a
// store has loaded and locked: states[i] is checks[i]'s state. It writes one
// Status per check to out and the state to keep to states[i], and reports
// whether any state changed (the store must then write states back).
// Stores call it so that every store decides batches the same way.
func DecideBatch(checks []Check, states []State, now int64, out []Status) (changed bool) {
	if len(checks) == 1 { // the common case, without scratch space
		c := &checks[0]
		next, v := c.Limit.decide(states[0], now, c.Cost)
		out[0] = v.status()
		if !v.allowed || c.Cost == 0 {
			return false
		}
		states[0] = next
		return true
	}
	var buf [8]State
	next := buf[:]
	if len(checks) > len(buf) {
		next = make([]State, len(checks))
	}
	blocked := false
	for i := range checks {
		c := &checks[i]
		var v verdict
		next[i], v = c.Limit.decide(states[i], now, c.Cost)
		out[i] = v.status()
		if !v.allowed && !c.Limit.shadow {
			blocked = true
		}
	}
	for i := range checks {
		c := &checks[i]
		switch {
		case c.Cost == 0 || !out[i].Allowed:
			// nothing to consume
		case blocked:
			_, v := c.Limit.decide(states[i], now, 0) // report as a peek
			out[i] = v.status()
		default:
			states[i] = next[i]
			changed = true
		}
	}
	return changed
}
