package sluice

import (
	"context"
	"errors"
	"fmt"
)

// Release implements Releaser: a released lease is capacity coming back, so
// the keys' remembered denials are dropped before the store behind the
// cache gives the leases back.
func (c *OverLimitCache) Release(ctx context.Context, checks []Check, leases []int64) error {
	for i := range checks {
		if leases[i] != 0 {
			c.Invalidate(checks[i].Key)
		}
	}
	r, ok := c.next.(Releaser)
	if !ok {
		return fmt.Errorf("sluice: over-limit cache: the store behind it (%T) cannot release leases", c.next)
	}
	return r.Release(ctx, checks, leases)
}

// Release implements Releaser. A lease may have been taken from the primary
// or, during an outage, from the local store; it is given back to both (a
// lease a store does not hold is ignored there). A primary that cannot be
// reached keeps its leases until they expire; the error says so.
func (f *Failover) Release(ctx context.Context, checks []Check, leases []int64) error {
	var errs []error
	if r, ok := f.local.(Releaser); ok {
		if err := r.Release(ctx, checks, leases); err != nil {
			errs = append(errs, fmt.Errorf("local: %w", err))
		}
	}
	if r, ok := f.primary.(Releaser); ok {
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if f.timeout > 0 {
			tctx, cancel = context.WithTimeout(ctx, f.timeout)
		}
		err := r.Release(tctx, checks, leases)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("primary (its leases expire by themselves): %w", err))
		}
	} else {
		errs = append(errs, fmt.Errorf("the primary store (%T) cannot release leases", f.primary))
	}
	return errors.Join(errs...)
}
