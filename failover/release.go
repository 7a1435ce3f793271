package failover

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser. A lease may have been taken from the
// primary or, during an outage, from the local store; it is given back to
// both (a lease a store does not hold is ignored there). A primary that
// cannot be reached keeps its leases until they expire; the error says so.
// A call to the primary is bounded by Options.Timeout, as in Apply.
func (f *Store) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if f.primary == nil {
		return errZero()
	}
	var errs []error
	if r, ok := f.local.(sluice.Releaser); ok {
		if err := r.Release(ctx, checks, leases); err != nil {
			errs = append(errs, fmt.Errorf("local: %w", err))
		}
	}
	if r, ok := f.primary.(sluice.Releaser); ok {
		tctx, cancel := f.bounded(ctx)
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
