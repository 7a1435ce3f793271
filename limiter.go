package sluice

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// A Limiter decides requests against a Store: every check of one call is
// admitted together or not at all. Limiter is safe for concurrent use when
// its Store is (the stores of this module are). The zero Limiter, and one
// made with a nil Store, has no Store and decides nothing: its Allow and Wait
// return an error wrapping ErrStoreUnavailable, as do Release and Refund
// given something to give back. Make one with NewLimiter.
type Limiter struct {
	store Store

	// waiting counts the Wait calls listening for leases given back, which
	// listeners holds (under mu) by the lease they listen for: Release
	// wakes those of each lease it gives back (see Wait).
	waiting   atomic.Int64
	mu        sync.Mutex
	listeners map[leaseID]map[*listener]struct{}
}

// NewLimiter returns a Limiter that keeps its state in store.
func NewLimiter(store Store) *Limiter {
	return &Limiter{store: store}
}

// errNoStore is the error of a Limiter without a Store.
var errNoStore = fmt.Errorf("sluice: %w: the Limiter has no Store (make it with NewLimiter)", ErrStoreUnavailable)

// errNoDecision is the error of a call given a nil *Decision.
var errNoDecision = fmt.Errorf("sluice: %w: no Decision to write to (nil)", ErrInvalidCheck)

// Allow decides checks as one unit and writes the outcome into d: the call
// is admitted only if every enforcing check fits, and then each consumes
// its cost; if any refuses, nothing is consumed and d.Violated names every
// limit that refused. An error (invalid checks, store unavailable) is never
// a decision: d is then undefined and nothing was consumed. A nil d is an
// error wrapping ErrInvalidCheck, for Allow, Wait, Release and Refund.
//
// Allow reuses d.Statuses and d.Violated: a caller that keeps its Decision
// and its slice of checks from call to call (a pool, a loop) allocates
// nothing once they have grown to size. An admitted AlgorithmConcurrency
// check holds its lease until Release.
func (l *Limiter) Allow(ctx context.Context, checks []Check, d *Decision) error {
	if d == nil {
		return errNoDecision
	}
	if err := ValidateChecks(checks); err != nil {
		return err
	}
	if l.store == nil {
		return errNoStore
	}
	if cap(d.Statuses) < len(checks) {
		d.Statuses = make([]Status, len(checks))
	}
	d.Statuses = d.Statuses[:len(checks)]
	if err := l.store.Apply(ctx, checks, d.Statuses); err != nil {
		return fmt.Errorf("sluice: %w", err)
	}
	d.decide(checks, d.Statuses)
	return nil
}

// Release gives back the concurrency leases that d, the decision Allow or
// Wait wrote for checks, took: call it when the admitted work ends. It then
// clears the leases from d.Statuses, so releasing the same Decision again
// (or a copy sharing its Statuses) gives back nothing; a lease that has
// already expired is ignored. Calls without AlgorithmConcurrency checks
// cost nothing. The store must be a Releaser: with one that is not,
// Release returns an error wrapping errors.ErrUnsupported. On an error the
// leases stay in d and expire by themselves if not released again. checks
// must be those d was decided for: checks of another number are an error
// wrapping ErrInvalidCheck. A refused Decision holds no lease and releases
// nothing.
func (l *Limiter) Release(ctx context.Context, checks []Check, d *Decision) error {
	if d == nil {
		return errNoDecision
	}
	if !d.Allowed {
		return nil
	}
	if len(d.Statuses) != len(checks) {
		return fmt.Errorf("sluice: release: %w: %d checks for a decision of %d", ErrInvalidCheck, len(checks), len(d.Statuses))
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
	if l.store == nil {
		return errNoStore
	}
	r, ok := l.store.(Releaser)
	if !ok {
		return fmt.Errorf("sluice: release: the store (%T) cannot release concurrency leases: %w", l.store, errors.ErrUnsupported)
	}
	if err := r.Release(ctx, checks, leases); err != nil {
		return fmt.Errorf("sluice: release: %w", err)
	}
	for i := range d.Statuses {
		d.Statuses[i].Lease = 0
	}
	if l.waiting.Load() > 0 {
		l.wake(checks, leases)
	}
	return nil
}
