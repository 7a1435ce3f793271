package failover

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-dev/sluice"
)

// seed brings each key that checks open to the local fallback (the first
// local decision on it since its last charge) down to this instance's share
// of what the primary last said it had left: a local state holding more
// than ⌊remaining/instances⌋ units is made to consume the difference.
// shares are checks with this instance's limits. Keys the primary said
// nothing of, or whose last word has expired (the limit has since been
// full again), start from the local state as it is.
func (f *Store) seed(ctx context.Context, checks, shares []sluice.Check) error {
	var idx []int
	var target []int64
	now := f.now()
	for i := range checks {
		c := &checks[i]
		if !chargeable(c.Limit) || !f.ledger.open(c) {
			continue
		}
		if w, ok := f.memo.get(c, now); ok {
			idx = append(idx, i)
			target = append(target, min(w.remaining/f.instances, shares[i].Limit.Burst()))
		}
	}
	if len(idx) == 0 {
		return nil
	}
	take := make([]sluice.Check, len(idx))
	st := make([]sluice.Status, len(idx))
	for j, i := range idx {
		take[j] = sluice.Check{Key: checks[i].Key, Limit: shares[i].Limit}
	}
	if err := f.local.Apply(ctx, take, st); err != nil { // peek
		return err
	}
	n := 0
	for j := range take {
		if extra := st[j].Remaining - target[j]; extra > 0 {
			take[n] = take[j]
			take[n].Cost = extra
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return f.local.Apply(ctx, take[:n], st[:n])
}

// settle charges the primary with what this instance admitted locally on
// the keys of checks, and on up to settleExtra other keys of the nodes ns,
// before the primary decides them: one Charge call, bounded by ctx. An
// error leaves the accounts open, to be charged by a later call.
func (f *Store) settle(ctx context.Context, checks []sluice.Check, ns []*node) error {
	return f.settleOr(ctx, checks, ns, false)
}

// settleOr is settle; with contact, a call that owes nothing still reaches
// the primary (a Charge of nothing: checks at cost 0), since its outcome
// tells whether the primary is back.
func (f *Store) settleOr(ctx context.Context, checks []sluice.Check, ns []*node, contact bool) error {
	taken, err := f.ledger.take(ctx, checks, func(a *account) bool {
		return f.nodeOf == nil || slices.Contains(ns, f.nodes.get(f.nodeOf(&a.check)))
	})
	if err != nil {
		return err
	}
	if f.charge == nil { // nothing to charge: close the accounts
		for _, a := range taken {
			f.ledger.uncharged.Add(a.charged)
		}
		f.ledger.done(taken, true)
		return nil
	}
	var owed []sluice.Check
	if len(taken) > 0 {
		owed, err = f.owed(ctx, taken)
	}
	if err == nil && len(owed) == 0 && contact {
		owed = make([]sluice.Check, len(checks))
		for i := range checks {
			owed[i] = sluice.Check{Key: checks[i].Key, Limit: checks[i].Limit}
		}
		err = f.charge(ctx, owed)
		owed = nil
	}
	if err == nil && len(owed) > 0 {
		err = f.charge(ctx, owed)
	}
	if len(taken) > 0 {
		f.ledger.done(taken, err == nil)
	}
	return err
}

// ErrReturning is the reason a Store gives (to Options.OnFallback) for a
// local decision made while it returns to a primary that is back: it is
// charged to the primary as it is made (see Store). It wraps
// sluice.ErrStoreUnavailable, as every fallback reason does.
var ErrReturning = fmt.Errorf("%w: returning to the primary: local decisions charged as they are made", sluice.ErrStoreUnavailable)

// returning reports whether calls to ns must be decided by returnCall: a
// Local Store with a Charge whose breaker lets a probe through, or that is
// within the return period of one of ns (after a successful probe, or
// from its first call when keys were owed then).
//
// A call that returns is counted on ns until returnCall ends (see
// returned). A call that does not waits, up to the Store's timeout, until
// no return call on ns is in flight: a local decision made just before a
// return period ends is charged before the primary decides again, or the
// primary could admit what that charge was about to take.
func (f *Store) returning(ns []*node, tks []ticket) bool {
	if f.charge == nil || f.ledger == nil {
		return false
	}
	for _, n := range ns {
		n.returns.Add(1) // before the clock is read: see drain
	}
	now := f.now().UnixNano()
	back := false
	for j, n := range ns {
		if n.fresh.Load() && n.fresh.CompareAndSwap(true, false) && f.ledger.owes(n.name, f.nodeOf) {
			// First met while this instance owes some of its keys, as one
			// whose probe succeeded: every instance must have charged
			// before any decides there.
			n.returnUntil.Store(now + int64(f.returnFor))
		}
		if BreakerState(tks[j].word&3) == BreakerHalfOpen || now < n.returnUntil.Load() {
			back = true
		}
	}
	if back {
		return true
	}
	f.returned(ns)
	f.drain(ns)
	return false
}

// returned ends the count of a call on ns (see returning).
func (f *Store) returned(ns []*node) {
	for _, n := range ns {
		n.returns.Add(-1)
	}
}

// drain waits until no return call on ns is in flight, at most the Store's
// timeout (a charge in flight is bounded by it too), or a second without
// one. A call counted after the end of a return period does not return,
// so the count drains.
func (f *Store) drain(ns []*node) {
	var deadline time.Time
	for _, n := range ns {
		for n.returns.Load() > 0 {
			if deadline.IsZero() {
				bound := f.timeout
				if bound <= 0 {
					bound = time.Second
				}
				deadline = time.Now().Add(bound)
			} else if time.Now().After(deadline) {
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// returnCall decides a call while the Store returns to its primary: on the
// local store, each limit this instance's share as during the outage, then
// charged to the primary at once with whatever the call's keys (and a few
// others) owe. The charge is the primary's health check: its success
// closes a half-open breaker and starts the node's return period, its
// failure counts against the node. The local decision stands either way.
func (f *Store) returnCall(ctx context.Context, checks []sluice.Check, out []sluice.Status, ns []*node, tks []ticket) error {
	defer f.returned(ns)
	if err := f.applyLocal(ctx, checks, out); err != nil {
		f.release(ns, tks)
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("failover: caller gave up: %w (%v)", cerr, ErrReturning)
		}
		return fmt.Errorf("failover: %w; local fallback: %w", ErrReturning, err)
	}
	reason := ErrReturning
	err := f.settleOr(ctx, checks, ns, true)
	switch {
	case err == nil:
		until := f.now().Add(f.returnFor).UnixNano()
		for j, n := range ns {
			if BreakerState(tks[j].word&3) == BreakerHalfOpen {
				n.returnUntil.Store(until)
			}
			n.breaker.Done(tks[j], true)
		}
	case ctx.Err() != nil:
		f.release(ns, tks)
	default:
		f.storeErrors.Add(1)
		for j, n := range ns {
			n.storeErrors.Add(1)
			n.breaker.Done(tks[j], false)
		}
		reason = fmt.Errorf("%w: %w", ErrReturning, err)
	}
	f.counted(ns, reason)
	return nil
}

// owed returns, for each account, the units to charge: what it admitted
// locally, as far as the local state still counts it (units whose window
// has passed, or that a bucket has refilled since, no longer limit anyone
// and are not charged). Accounts that owe nothing are left out.
func (f *Store) owed(ctx context.Context, accounts []*account) ([]sluice.Check, error) {
	peeks := make([]sluice.Check, len(accounts))
	st := make([]sluice.Status, len(accounts))
	for i, a := range accounts {
		peeks[i] = sluice.Check{Key: a.check.Key, Limit: f.share(a.check.Limit)}
	}
	for lo := 0; lo < len(peeks); lo += sluice.MaxChecks {
		hi := min(lo+sluice.MaxChecks, len(peeks))
		if err := f.local.Apply(ctx, peeks[lo:hi], st[lo:hi]); err != nil {
			return nil, err
		}
	}
	var owed []sluice.Check
	for i, a := range accounts {
		held := peeks[i].Limit.Burst() - st[i].Remaining
		if c := min(held, a.charged); c > 0 {
			owed = append(owed, sluice.Check{Key: a.check.Key, Limit: a.check.Limit, Cost: c})
		}
	}
	return owed, nil
}
