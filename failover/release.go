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
// A call to the primary is bounded by Options.Timeout, as in Apply, and is
// not made for the checks of a node whose breaker keeps Apply's calls away
// (open, OpenFor not yet passed): their leases on the primary expire by
// themselves, and the error wraps ErrCircuitOpen.
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
	r, ok := f.primary.(sluice.Releaser)
	if !ok {
		errs = append(errs, fmt.Errorf("the primary store (%T) cannot release leases", f.primary))
		return errors.Join(errs...)
	}
	primary, skipped := f.reachable(checks, leases)
	if skipped {
		errs = append(errs, fmt.Errorf("primary (its leases expire by themselves): %w", ErrCircuitOpen))
	}
	if primary != nil {
		tctx, cancel := f.bounded(ctx)
		err := r.Release(tctx, checks, primary)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("primary (its leases expire by themselves): %w", err))
		}
	}
	return errors.Join(errs...)
}

// reachable returns leases without those of checks whose node's breaker
// is refusing calls, nil if none is left, and whether it left any out.
func (f *Store) reachable(checks []sluice.Check, leases []int64) (kept []int64, skipped bool) {
	if len(leases) != len(checks) {
		return leases, false // the primary says why
	}
	left := 0
	for i := range checks {
		if leases[i] == 0 {
			continue
		}
		name := ""
		if f.nodeOf != nil {
			name = f.nodeOf(&checks[i])
		}
		if n := f.nodes.lookup(name); n != nil && n.breaker.refusing() {
			if kept == nil {
				kept = append([]int64(nil), leases...)
			}
			kept[i], skipped = 0, true
			continue
		}
		left++
	}
	switch {
	case left == 0:
		return nil, skipped
	case kept == nil:
		return leases, false
	}
	return kept, skipped
}
