package sluice

import (
	"fmt"
	"time"
)

// Bounds on one call to Limiter.Allow or Store.Apply.
const (
	// MaxChecks is the most checks one call may carry.
	MaxChecks = 64
	// MaxKeyLen is the longest Check.Key, in bytes.
	MaxKeyLen = 1024
)

// A Check asks to spend Cost units of Limit for the subject Key.
//
// Key identifies who is limited (an API key's hash, a user id, an IP prefix,
// or a constant for a global limit); the same Key under different limits
// names different state. Cost 0 is a peek: it is always allowed, consumes
// nothing and reports the current state. A Cost above the limit's Burst is
// refused with RetryAfter Never, without touching state.
type Check struct {
	Key   string
	Limit Limit
	Cost  int64
}

// valid reports whether c can be decided on its own: whether validate
// returns nil.
func (c *Check) valid() bool {
	return c.Key != "" && len(c.Key) <= MaxKeyLen && c.Cost >= 0 && c.Limit.p.RW != 0
}

// validate reports why c cannot be decided.
func (c *Check) validate() error {
	switch {
	case c.Key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidCheck)
	case len(c.Key) > MaxKeyLen:
		return fmt.Errorf("%w: key of %d bytes is longer than %d", ErrInvalidCheck, len(c.Key), MaxKeyLen)
	}
	return c.Limit.decidable(c.Cost)
}

// stateID is ID for a *Limit.
func (l *Limit) stateID() string {
	if l.id != "" {
		return l.id
	}
	return l.name
}

// ValidateChecks reports why checks cannot be decided as one call: too few or
// too many, a check that is invalid on its own, or the same key and limit name
// twice. Stores may rely on Limiter having called it.
func ValidateChecks(checks []Check) error {
	if len(checks) == 0 || len(checks) > MaxChecks {
		return fmt.Errorf("%w: %d checks in one call (want 1 to %d)", ErrInvalidCheck, len(checks), MaxChecks)
	}
	for i := range checks {
		if !checks[i].valid() {
			return fmt.Errorf("check %d: %w", i, checks[i].validate())
		}
		for j := 0; j < i; j++ {
			// IDs first: a plan's limits have different ones, often of
			// different lengths, while its checks share one key.
			if checks[j].Limit.stateID() == checks[i].Limit.stateID() && checks[j].Key == checks[i].Key {
				return fmt.Errorf("%w: checks %d and %d both spend %q for the same key (add their costs instead)",
					ErrInvalidCheck, j, i, checks[i].Limit.ID())
			}
		}
	}
	return nil
}

// Status is the outcome of one Check.
type Status struct {
	// Allowed reports whether the check fits. In a call with several checks
	// the call is admitted only if every enforcing check is Allowed.
	Allowed bool
	// Remaining is the units still available at once after this decision,
	// rounded down: in [0, Limit.Burst()].
	Remaining int64
	// ResetAfter is the time until the limit is back at full capacity if
	// nothing else arrives. Zero when it already is.
	ResetAfter time.Duration
	// RetryAfter is zero when Allowed. Otherwise it is the shortest wait,
	// rounded up to a microsecond, after which the same check is allowed if
	// nothing else arrives; Never if no wait suffices.
	RetryAfter time.Duration
	// Delay is how long an admitted check must wait before it proceeds; only
	// a leaky-bucket queue sets it.
	Delay time.Duration
	// Lease identifies the slot an admitted AlgorithmConcurrency check took:
	// the store's time, in µs since Epoch, it was taken at; Limiter.Release
	// gives it back. Zero otherwise. A Store decorator may encode which
	// store holds the lease in it: pass it back as it is.
	Lease int64
	// Charged is the receipt of the cost an admitted check of
	// AlgorithmFixedWindow, AlgorithmSlidingCounter or AlgorithmSlidingLog
	// spent: the store's time, in µs since Epoch, it was counted at (inside
	// the window that counts it; for a sliding log, its entry's time).
	// Limiter.Refund gives that cost back. Zero when nothing was charged (a
	// refusal, cost 0, a check of a call another check refused), under other
	// algorithms, for a charge at Epoch itself, and after Refund. A Store
	// decorator may encode which store charged in it: pass it back as it is.
	Charged int64
	// Unavailable reports that no store decided the check: a Store
	// decorator decided it by a policy because the store it decides on
	// could not be reached, so that nothing was counted and Remaining
	// tells no state. Under a policy that admits then (a failover's allow)
	// Allowed is true. Under one that refuses (a failover's deny) Allowed
	// is false and RetryAfter is when the store is asked again: it is the
	// service's capacity that is short, not the client's quota, and a front
	// end answers such a refusal as a 503, not a 429.
	Unavailable bool
	// NoRoom reports that the store refused the check for want of room to
	// keep its state (a memory store under memory.WithMaxKeys full of
	// states it may not evict): Allowed is false, nothing was counted or
	// charged, and Remaining (0) and ResetAfter are no measure of the
	// key's use; RetryAfter is when room may be found. It is the store's
	// capacity that is short, not the client's quota.
	NoRoom bool
	// Undecided reports that nothing decided the check: another check
	// refused the call and this one was not evaluated (an over-limit cache
	// refused the call by a refusal it remembers, without asking its
	// store). Allowed is true: as far as is known the check did not refuse
	// the call. Nothing was counted or charged, and Remaining and
	// ResetAfter (0) are no measure of the key's use. Only a refused call
	// has such statuses, so a Decision's Limit and figures are never those
	// of an Undecided check.
	Undecided bool
}

// Decision is the outcome of one Limiter.Allow call: all its checks admitted
// together, or none.
type Decision struct {
	// Allowed reports whether the call was admitted. Shadow limits never make
	// it false.
	Allowed bool
	// Limit is the limit that decided: when refused, the violated limit with
	// the longest RetryAfter; when admitted, the enforcing limit with the least
	// Remaining (ties: the longest ResetAfter).
	Limit Limit
	// Remaining, ResetAfter and RetryAfter are the deciding limit's. When
	// refused, RetryAfter is the shortest wait after which every violated
	// limit admits the call, if nothing else arrives.
	Remaining  int64
	ResetAfter time.Duration
	RetryAfter time.Duration
	// Delay is the longest Delay of the enforcing checks: how long an
	// admitted call must wait before it proceeds (leaky-bucket queues
	// only). A shadow queue's Delay shows in its Status alone: a shadow
	// limit holds nothing back.
	Delay time.Duration
	// Violated names every enforcing limit that refused, in check order;
	// empty when admitted.
	Violated []string
	// Statuses holds one Status per check, in check order. Shadow checks
	// that would have refused show Allowed false here.
	Statuses []Status
}

// decide fills d from the per-check statuses, in one pass: it keeps both
// the enforcing check that decides an admitted call and the refused one
// that decides a refused call, and reports the one for the outcome.
func (d *Decision) decide(checks []Check, statuses []Status) {
	d.Allowed = true
	d.Violated = d.Violated[:0]
	d.Delay = 0
	best, refusing := -1, -1
	for i := range checks {
		st := &statuses[i]
		if !checks[i].Limit.shadow {
			d.Delay = max(d.Delay, st.Delay)
		}
		switch {
		case checks[i].Limit.shadow:
		case !st.Allowed:
			d.Allowed = false
			d.Violated = append(d.Violated, checks[i].Limit.name)
			if refusing < 0 || st.RetryAfter > statuses[refusing].RetryAfter {
				refusing = i
			}
		case best < 0 || st.Remaining < statuses[best].Remaining ||
			st.Remaining == statuses[best].Remaining && st.ResetAfter > statuses[best].ResetAfter:
			best = i
		}
	}
	switch {
	case !d.Allowed:
		best = refusing
	case best < 0: // only shadow checks: report the first
		best = 0
	}
	d.Limit = checks[best].Limit
	d.Remaining = statuses[best].Remaining
	d.ResetAfter = statuses[best].ResetAfter
	d.RetryAfter = statuses[best].RetryAfter
	if d.Allowed {
		d.RetryAfter = 0
	}
}
