package sluice

import (
	"context"
	"fmt"
	"time"
)

// A Limiter decides requests against a Store: every check of one call is
// admitted together or not at all. Limiter is safe for concurrent use when
// its Store is (the stores of this module are).
type Limiter struct {
	store Store
	timed TimedStore // store, when it reports its time; else nil
}

// NewLimiter returns a Limiter that keeps its state in store.
func NewLimiter(store Store) *Limiter {
	timed, _ := store.(TimedStore)
	return &Limiter{store: store, timed: timed}
}

// Allow decides checks as one unit: the call is admitted only if every
// enforcing check fits, and then each consumes its cost; if any refuses,
// nothing is consumed and Decision.Violated names every limit that refused.
// An error (invalid checks, store unavailable) is never a decision.
//
// Allow allocates the Decision's slices; AllowInto reuses them.
func (l *Limiter) Allow(ctx context.Context, checks ...Check) (Decision, error) {
	var d Decision
	err := l.AllowInto(ctx, &d, checks)
	return d, err
}

// AllowInto is Allow writing into d, reusing d.Statuses and d.Violated: in a
// loop it allocates nothing once they have grown to size.
func (l *Limiter) AllowInto(ctx context.Context, d *Decision, checks []Check) error {
	if err := ValidateChecks(checks); err != nil {
		return err
	}
	if cap(d.Statuses) < len(checks) {
		d.Statuses = make([]Status, len(checks))
	}
	d.Statuses = d.Statuses[:len(checks)]
	if l.timed != nil {
		now, err := l.timed.ApplyTimed(ctx, checks, d.Statuses)
		if err != nil {
			return fmt.Errorf("sluice: %w", err)
		}
		d.setAt(now)
	} else {
		if err := l.store.Apply(ctx, checks, d.Statuses); err != nil {
			return fmt.Errorf("sluice: %w", err)
		}
		d.At = time.Time{}
	}
	d.decide(checks, d.Statuses)
	return nil
}

// Release gives back the concurrency leases that d, an admitted decision of
// checks, took: call it when the admitted work ends (once). Calls without
// AlgorithmConcurrency checks cost nothing. The store must be a Releaser.
func (l *Limiter) Release(ctx context.Context, checks []Check, d *Decision) error {
	if !d.Allowed || len(d.Statuses) != len(checks) {
		return nil
	}
	var buf [8]int64
	leases := buf[:0]
	held := false
	for i := range checks {
		leases = append(leases, d.Statuses[i].Lease)
		held = held || d.Statuses[i].Lease != 0
	}
	if !held {
		return nil
	}
	return l.release(ctx, checks, leases)
}

// release gives back leases, one per check (0: none), through the store.
func (l *Limiter) release(ctx context.Context, checks []Check, leases []int64) error {
	r, ok := l.store.(Releaser)
	if !ok {
		return fmt.Errorf("sluice: release: the store (%T) cannot release concurrency leases", l.store)
	}
	if err := r.Release(ctx, checks, leases); err != nil {
		return fmt.Errorf("sluice: release: %w", err)
	}
	return nil
}
