package sluice

import "github.com/sluice-dev/sluice/internal/algo"

// DecideBatch applies the all-or-nothing rule of Store.Apply to states that a
// store has loaded and locked: states[i] is checks[i]'s state, and now the
// store's time in µs since Epoch. It writes one Status per check to out and
// the state to keep to states[i], and reports whether any state changed (the
// store must then write states back). It is what a Store implementation
// calls to decide, so that every store decides batches the same way; it
// allocates nothing for up to 8 checks.
func DecideBatch(checks []Check, states []State, now int64, out []Status) (changed bool) {
	var buf [8]State
	next := buf[:]
	if len(checks) > len(buf) {
		next = make([]State, len(checks))
	}
	blocked := false
	var v algo.Verdict
	for i := range checks {
		c := &checks[i]
		next[i] = states[i]
		c.Limit.decide(&next[i], now, c.Cost, &v)
		writeStatus(&v, &out[i])
		if !v.Allowed && !c.Limit.shadow {
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
			c.Limit.decide(&peek, now, 0, &v) // report as a peek
			writeStatus(&v, &out[i])
		default:
			states[i] = next[i]
			changed = true
		}
	}
	return changed
}
