package redis

import (
	"context"
	"slices"

	"github.com/sluice-dev/sluice"
)

// Refund implements sluice.Refunder: for each check of a fixed window,
// sliding counter or sliding log with a non-zero receipt (Status.Charged
// of the admitting call), it takes the check's Cost back out of the key's
// state while the window that counted it still counts it — the state the
// key would have without that charge, at Redis's time. Other checks and
// zero receipts are skipped, and so is a receipt given at or before the
// key's last Reset, or before the state the key holds now was created (the
// state that counted it evicted by Redis, or deleted, since): the state
// there now never counted it — unless the clock stepped back across the
// eviction, so that the fresh state's creation precedes the receipt (see
// docs/decisions.md), where the memory store skips it. Refunds of keys
// in one Cluster slot are one
// script run; an error wraps sluice.ErrStoreUnavailable as Apply's do, and
// the charges of the slots not reached stay counted. Receipts not one per
// check, or a check to refund whose limit cannot be decided, refund nothing:
// the error wraps sluice.ErrInvalidCheck, as the memory store's does.
func (s *Store) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if err := s.unusable("refund script"); err != nil {
		return err
	}
	return s.stamped(ctx, s.scripts.refundCharge, "refund script", checks, charged, refundable, true)
}

// refundable reports whether a charge of alg can be refunded exactly (see
// sluice.Refunder).
func refundable(alg sluice.Algorithm) bool {
	return alg == sluice.AlgorithmFixedWindow || alg == sluice.AlgorithmSlidingCounter || alg == sluice.AlgorithmSlidingLog
}

var _ sluice.Refunder = (*Store)(nil)

// Refund implements sluice.Refunder: a charge goes back to Redis or to the
// local store, wherever it was made (see failover.Store.Refund). With
// leased quota (Options.Lease), a unit admitted from a lease carries no
// receipt (Status.Charged is 0) and is not refunded: by the time the answer
// is known its lease may have ended or been given back to Redis, where
// taking the unit back would need the window the lease was taken in. A
// caller that must count exactly (count: successes or failures) keeps such
// limits off leases; config refuses the two together. A receipt Redis gave
// before the store last saw it lose what it counted (Losses: a master back
// without its data, writes lost in a failover) is not refunded either: the
// state there now never counted it, and taking its units out of that
// state would take them from other calls.
func (g *Guarded) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if g.failover == nil {
		return errNoStore()
	}
	return g.failover.Refund(ctx, checks, charged)
}

// Refund implements sluice.Refunder once connected. Receipts from before
// the watch last found what Redis counted lost are not refunded.
func (l *lazy) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	s, err := l.store()
	if err != nil {
		return err
	}
	if at := l.watch.lostAt.Load(); at != 0 && len(charged) == len(checks) {
		kept := slices.Clone(charged)
		for i, r := range kept {
			if r < at {
				kept[i] = 0
			}
		}
		charged = kept
	}
	return s.Refund(ctx, checks, charged)
}

var _ sluice.Refunder = (*Guarded)(nil)
