package sluice

import (
	"context"
	"errors"
	"fmt"
)

// A Refunder is a Store that takes charges back after the fact, so that a
// caller may count only some of what it admitted (only the requests that
// failed, say). Both stores of this module are Refunders.
//
// Only AlgorithmFixedWindow, AlgorithmSlidingCounter and AlgorithmSlidingLog
// can be refunded exactly: they keep what they counted, a window's count or
// a log's entry. A bucket (token, leaky, GCRA) keeps only how much it
// misses, and while it would have been full without a charge its refill
// went to that charge alone; whether it was full in between is not in its
// state, so a refund could give back more than was ever missing.
// Concurrency leases are given back by Release.
type Refunder interface {
	// Refund takes back, for each check with a non-zero charged[i]
	// (Status.Charged of the admitting call), its Cost of what was counted
	// then: the key's state becomes what it would be had that many units
	// never been charged, while the window that counted them still counts
	// them, and stays as it is once that window no longer does. Checks of
	// other algorithms and zero receipts are skipped. A receipt must be
	// refunded at most once, with the Check (key, limit) that was charged
	// and a Cost of at most the one charged: less gives back part of the
	// charge (a reservation settled to what was used). charged has
	// len(checks). A refund never reaches a state that a Reset of its key
	// made since the receipt: in both stores of this module, a receipt
	// given at or before the reset refunds nothing, and the state the key
	// counts afresh since keeps its count (each store remembers a reset
	// for a bounded time: see its Reset). Nor does it reach a state
	// created since a state that counted the receipt was evicted (the
	// memory store's, to make room; Redis's, by its maxmemory-policy):
	// the state the key counts afresh keeps its count. The Redis store
	// knows when each state was created; the memory store remembers an
	// eviction as it does a reset, for a bounded time and number (see
	// its Refund). A fixed window keeps no time its count began: after its
	// limit's window changed (a reload, another plan under the same ID)
	// and the key counted afresh, a receipt of the old window may be
	// taken from the new count, at most its Cost once (docs/decisions.md).
	Refund(ctx context.Context, checks []Check, charged []int64) error
}

// Refund gives back what d, the decision Allow or Wait wrote for checks,
// charged under AlgorithmFixedWindow, AlgorithmSlidingCounter and
// AlgorithmSlidingLog (the checks with a non-zero Status.Charged): each
// such check's state becomes what it would be had the call never been
// admitted, for as long as the window that counted it still counts it;
// after that there is nothing left to give back. Checks of other
// algorithms are not refunded (see Refunder), so a caller that must count
// only some requests exactly uses the three algorithms above.
//
// A check's Cost may be less than the call charged: Refund then gives back
// that many units of the charge and the rest stays counted, so a request
// admitted at the most it may use (a reservation) can be settled to what it
// used once that is known. Cost 0 gives back nothing.
//
// Refund clears Charged from d.Statuses, so refunding the same Decision
// again (or a copy sharing its Statuses) gives back nothing. To refund some
// checks only, clear the Charged of the others first. A refused decision
// charged nothing and refunds nothing. The store must be a Refunder: with
// one that is not, Refund returns an error wrapping errors.ErrUnsupported.
// On an error nothing is known to be given back, and the receipts stay in d.
// checks must be those d was decided for: checks of another number are an
// error wrapping ErrInvalidCheck.
func (l *Limiter) Refund(ctx context.Context, checks []Check, d *Decision) error {
	if d == nil {
		return errNoDecision
	}
	if !d.Allowed {
		return nil
	}
	if len(d.Statuses) != len(checks) {
		return fmt.Errorf("sluice: refund: %w: %d checks for a decision of %d", ErrInvalidCheck, len(checks), len(d.Statuses))
	}
	var buf [8]int64
	charged := buf[:0]
	any := false
	for i := range checks {
		charged = append(charged, d.Statuses[i].Charged)
		any = any || d.Statuses[i].Charged != 0
	}
	if !any {
		return nil
	}
	if l.store == nil {
		return errNoStore
	}
	r, ok := l.store.(Refunder)
	if !ok {
		return fmt.Errorf("sluice: refund: the store (%T) cannot refund charges: %w", l.store, errors.ErrUnsupported)
	}
	if err := r.Refund(ctx, checks, charged); err != nil {
		return fmt.Errorf("sluice: refund: %w", err)
	}
	for i := range d.Statuses {
		d.Statuses[i].Charged = 0
	}
	return nil
}
