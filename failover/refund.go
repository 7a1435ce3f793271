package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
)

// localMark is added to the receipt (Status.Charged) and to the lease
// (Status.Lease) of a check the local store admitted, so that Refund and
// Release know which store holds them: the two stores stamp with clocks of
// their own, and a lease or receipt of one may carry the same microsecond
// as one of the other. The stores' stamps are times within ±2^61 µs (about
// 73,000 years around Epoch), so a marked stamp is above every unmarked one.
const localMark = 1 << 62

// markLocal marks the receipts and leases in out as the local store's.
func markLocal(out []sluice.Status) {
	for i := range out {
		if out[i].Charged != 0 {
			out[i].Charged += localMark
		}
		if out[i].Lease != 0 {
			out[i].Lease += localMark
		}
	}
}

// isLocal reports whether the stamp s (a receipt or a lease) was marked by
// markLocal.
func isLocal(s int64) bool { return s > localMark/2 }

// Refund implements sluice.Refunder. A charge goes back to the store that
// made it. The primary's goes to the primary, bounded by Options.Timeout as
// in Apply; it is not asked for the checks of a node whose breaker keeps
// Apply's calls away (open, OpenFor not yet passed): those charges stay
// counted there, which errs on the side of refusing, and the error wraps
// ErrCircuitOpen. A local decision's goes to the local store with this
// instance's share of the limit, and then out of the account the ledger
// keeps for the primary, so that the recovery charge does not charge
// refunded units. A local charge the ledger has already charged to the
// primary, or sent to it (or that it could not keep account of), stays
// charged there, and the units the ledger owes for later decisions stay
// owed: the refund then gives back less than it could, never more. Both stores must
// be sluice.Refunders: a charge on one that is not gives an error wrapping
// errors.ErrUnsupported.
func (f *Store) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if f.primary == nil {
		return errZero()
	}
	if len(charged) != len(checks) {
		return fmt.Errorf("failover: %w: %d checks with %d charges", sluice.ErrInvalidCheck, len(checks), len(charged))
	}
	primary := make([]int64, len(checks))
	local := make([]int64, len(checks))
	var onPrimary, onLocal bool
	for i := range checks {
		switch c := charged[i]; {
		case isLocal(c):
			local[i], onLocal = c-localMark, true
		case c != 0:
			primary[i], onPrimary = c, true
		}
	}
	var errs []error
	if onLocal {
		if err := f.refundLocal(ctx, checks, local); err != nil {
			errs = append(errs, fmt.Errorf("local: %w", err))
		}
	}
	if onPrimary {
		r, ok := f.primary.(sluice.Refunder)
		if !ok {
			return fmt.Errorf("failover: the primary store (%T) cannot refund charges: %w", f.primary, errors.ErrUnsupported)
		}
		primary, skipped := f.reachable(checks, primary)
		if skipped {
			errs = append(errs, fmt.Errorf("primary (its charges stay counted): %w", ErrCircuitOpen))
		}
		if primary != nil {
			tctx, cancel := f.bounded(ctx)
			err := r.Refund(tctx, checks, primary)
			cancel()
			if err != nil {
				f.sideFailed(ctx, checks, primary, err)
				errs = append(errs, fmt.Errorf("primary: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// refundLocal refunds the receipts the local store gave, with the shares
// applyLocal decided, and takes them out of the ledger's accounts.
func (f *Store) refundLocal(ctx context.Context, checks []sluice.Check, receipts []int64) error {
	if err := f.refundShares(ctx, checks, receipts); err != nil {
		return err
	}
	if f.ledger != nil {
		f.ledger.refund(checks, receipts)
	}
	return nil
}

// refundShares refunds the receipts the local store gave, with the shares
// applyLocal decided.
func (f *Store) refundShares(ctx context.Context, checks []sluice.Check, receipts []int64) error {
	r, ok := f.local.(sluice.Refunder)
	if !ok {
		return fmt.Errorf("the local store (%T) cannot refund charges: %w", f.local, errors.ErrUnsupported)
	}
	shares := append([]sluice.Check(nil), checks...)
	if f.instances > 1 {
		for i := range shares {
			shares[i].Limit = f.share(shares[i].Limit)
		}
	}
	return r.Refund(ctx, shares, receipts)
}

// refund takes the cost of each check with a receipt out of its account,
// as far as the account has not been claimed for a charge to the primary:
// a receipt earlier than the account's unclaimed decisions (its from) is
// of units claimed or already charged, which stay charged, and takes
// nothing from the units admitted since. An account holds the units of
// its key and limit ID whatever limit of that ID admitted them (see
// ledger.account), so a receipt given under a limit since changed takes
// its units out as well.
func (lg *ledger) refund(checks []sluice.Check, receipts []int64) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	for i := range checks {
		c := &checks[i]
		if receipts[i] == 0 || !chargeable(c.Limit) {
			continue
		}
		k := stateKey{c.Key, c.Limit.ID()}
		a := lg.m[k]
		if a == nil || a.from == 0 || receipts[i] < a.from {
			continue
		}
		back := min(c.Cost, a.admitted-a.charged) // a.charged is 0 unless claimed
		if back <= 0 {
			continue
		}
		a.admitted -= back
		if a.admitted == 0 && a.doubt.units == 0 && a.busy == nil {
			delete(lg.m, k)
			lg.size.Add(-1)
		}
	}
}

// bounded returns ctx bounded by Options.Timeout, as a call to the primary
// is.
func (f *Store) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.timeout > 0 {
		return context.WithTimeout(ctx, f.timeout)
	}
	return ctx, func() {}
}

// chargeBounded returns ctx bounded as a call that charges the primary
// before it reaches it again is: by Options.Timeout, or by
// Options.ChargeTimeout when the primary bounds its calls itself.
func (f *Store) chargeBounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return f.chargeBoundedFrom(ctx, time.Time{})
}

// chargeBoundedFrom is chargeBounded for a call that began at begun (zero:
// now): the bound runs from then.
func (f *Store) chargeBoundedFrom(ctx context.Context, begun time.Time) (context.Context, context.CancelFunc) {
	var bound time.Duration
	switch {
	case f.timeout > 0:
		bound = f.timeout
	case f.timeout < 0 && f.chargeFor > 0:
		bound = f.chargeFor
	default:
		return ctx, func() {}
	}
	if begun.IsZero() {
		begun = time.Now()
	}
	return context.WithDeadline(ctx, begun.Add(bound))
}

var _ sluice.Refunder = (*Store)(nil)
