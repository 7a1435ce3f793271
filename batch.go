package sluice

// DecideBatch applies the all-or-nothing rule of Store.Apply to states that a
// store has loaded and locked: states[i] is checks[i]'s state. It writes one
// Status per check to out and the state to keep to states[i], and reports
// whether any state changed (the store must then write states back).
// Stores call it so that every store decides batches the same way.
func DecideBatch(checks []Check, states []State, now int64, out []Status) (changed bool) {
	if len(checks) == 1 { // the common case, in place
		var v verdict
		changed = checks[0].Limit.step(&states[0], now, checks[0].Cost, &v)
		v.writeStatus(&out[0])
		return changed
	}
	var buf [8]State
	next := buf[:]
	if len(checks) > len(buf) {
		next = make([]State, len(checks))
	}
	blocked := false
	var v verdict
	for i := range checks {
		c := &checks[i]
		next[i] = states[i]
		c.Limit.step(&next[i], now, c.Cost, &v)
		v.writeStatus(&out[i])
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
			peek := states[i]
			c.Limit.step(&peek, now, 0, &v) // report as a peek
			v.writeStatus(&out[i])
		default:
			states[i] = next[i]
			changed = true
		}
	}
	return changed
}
