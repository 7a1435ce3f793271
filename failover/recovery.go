package failover

import (
	"context"
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
	now := time.Now()
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
	taken, err := f.ledger.take(ctx, checks, func(a *account) bool {
		return f.nodeOf == nil || slices.Contains(ns, f.nodes.get(f.nodeOf(&a.check)))
	})
	if err != nil || len(taken) == 0 {
		return err
	}
	owed, err := f.owed(ctx, taken)
	if err == nil && len(owed) > 0 {
		if f.charge == nil {
			for _, c := range owed {
				f.ledger.uncharged.Add(c.Cost)
			}
		} else {
			err = f.charge(ctx, owed)
		}
	}
	f.ledger.done(taken, err == nil)
	return err
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
