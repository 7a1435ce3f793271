package sluice

import (
	"fmt"

	"github.com/sluice-dev/sluice/internal/algo"
)

// DecideBatch applies the all-or-nothing rule of Store.Apply to states that a
// store has loaded and locked: states[i] is checks[i]'s state, and now the
// store's time in µs since Epoch. It writes one Status per check to out and
// the state to keep to states[i], and reports whether any state changed (the
// store must then write states back). It is what a Store implementation
// calls to decide, so that every store decides batches the same way; it
// allocates nothing for up to 8 checks.
//
// DecideBatch decides nothing and returns an error wrapping ErrInvalidCheck
// when states or out is not as long as checks, or when a check cannot be
// decided on its own (see Limit.Decide); states and out are then as they
// were. It does not look for a key and limit named twice: a store that
// needs that checked calls ValidateChecks (Limiter does, before Apply).
func DecideBatch(checks []Check, states []State, now int64, out []Status) (changed bool, err error) {
	if len(states) != len(checks) || len(out) != len(checks) {
		return false, fmt.Errorf("%w: %d checks with %d states and %d statuses", ErrInvalidCheck, len(checks), len(states), len(out))
	}
	for i := range checks {
		if c := &checks[i]; c.Limit.p.RW == 0 || c.Cost < 0 {
			return false, fmt.Errorf("check %d: %w", i, c.Limit.decidable(c.Cost))
		}
	}
	// Each check is decided in place; the states as loaded are kept aside
	// to be restored if an enforcing check refuses (one check has nothing
	// to restore: a refusal leaves its state as it was).
	var before []State
	if len(checks) > 1 {
		var buf [8]State
		if len(checks) <= len(buf) {
			before = buf[:len(checks)]
		} else {
			before = make([]State, len(checks))
		}
	}
	blocked := false
	var v algo.Verdict
	for i := range checks {
		c := &checks[i]
		if before != nil {
			before[i] = states[i]
		}
		if c.Limit.decide(&states[i], now, c.Cost, &v) {
			changed = true
		}
		writeStatus(&v, &out[i])
		if !v.Allowed && !c.Limit.shadow {
			blocked = true
		}
	}
	if !blocked || !changed {
		return changed, nil
	}
	for i := range checks {
		c := &checks[i]
		if c.Cost == 0 || !out[i].Allowed {
			continue // unchanged
		}
		states[i] = before[i]
		c.Limit.decide(&states[i], now, 0, &v) // report as a peek
		writeStatus(&v, &out[i])
	}
	return false, nil
}
