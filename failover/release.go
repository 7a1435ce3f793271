package failover

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser. A lease was taken either from the
// primary or, during an outage or a return (see Store), from the local
// store, which Apply marks in its stamp: each lease is given back to the
// store that holds it, and to that one only, since the two stores' stamps
// may coincide. A primary that cannot be reached keeps its leases until
// they expire; the error says so. A call to the primary is bounded by
// Options.Timeout, as in Apply, and is not made for the checks of a node
// whose breaker keeps Apply's calls away (open, OpenFor not yet passed):
// their leases on the primary expire by themselves, and the error wraps
// ErrCircuitOpen. Leases not one per check are an error wrapping
// sluice.ErrInvalidCheck, and nothing is released.
func (f *Store) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if f.primary == nil {
		return errZero()
	}
	if len(leases) != len(checks) {
		return fmt.Errorf("failover: %w: %d checks with %d leases", sluice.ErrInvalidCheck, len(checks), len(leases))
	}
	local, primary := splitLeases(leases)
	var errs []error
	if local != nil {
		r, ok := f.local.(sluice.Releaser)
		if !ok {
			errs = append(errs, fmt.Errorf("the local store (%T) cannot release leases: %w", f.local, errors.ErrUnsupported))
		} else if err := r.Release(ctx, checks, local); err != nil {
			errs = append(errs, fmt.Errorf("local: %w", err))
		}
	}
	if primary == nil {
		return errors.Join(errs...)
	}
	r, ok := f.primary.(sluice.Releaser)
	if !ok {
		errs = append(errs, fmt.Errorf("the primary store (%T) cannot release leases: %w", f.primary, errors.ErrUnsupported))
		return errors.Join(errs...)
	}
	primary, skipped := f.reachable(checks, primary)
	if skipped {
		errs = append(errs, fmt.Errorf("primary (its leases expire by themselves): %w", ErrCircuitOpen))
	}
	if primary != nil {
		tctx, cancel := f.bounded(ctx)
		err := r.Release(tctx, checks, primary)
		cancel()
		if err != nil {
			f.sideFailed(ctx, checks, primary, err)
			errs = append(errs, fmt.Errorf("primary (its leases expire by themselves): %w", err))
		}
	}
	return errors.Join(errs...)
}

// splitLeases returns the leases of the local store, unmarked, and those of
// the primary, each as long as leases with zeros for the other's; nil for a
// store that holds none of them.
func splitLeases(leases []int64) (local, primary []int64) {
	for i, l := range leases {
		switch {
		case l == 0:
		case isLocal(l):
			if local == nil {
				local = make([]int64, len(leases))
			}
			local[i] = l - localMark
		default:
			if primary == nil {
				primary = make([]int64, len(leases))
			}
			primary[i] = l
		}
	}
	return local, primary
}

// reachable returns leases (or receipts) without those of checks whose
// node's breaker is refusing calls, nil if none is left, and whether it
// left any out.
func (f *Store) reachable(checks []sluice.Check, leases []int64) (kept []int64, skipped bool) {
	left := 0
	for i := range checks {
		if leases[i] == 0 {
			continue
		}
		name := f.nodeName(&checks[i])
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

// sideFailed counts err, the error of a refund or a release the primary
// was asked for the checks whose receipt or lease in asked is not 0, as a
// store error of the Store and of the nodes it
// blames, as Apply counts a decision's, unless the caller gave up (ctx
// done, or its deadline passed) or the checks were invalid. It does not feed the breakers: their
// trials are decisions, and a decision is what finds the primary down.
func (f *Store) sideFailed(ctx context.Context, checks []sluice.Check, asked []int64, err error) {
	if callerGone(ctx) != nil || errors.Is(err, sluice.ErrInvalidCheck) || errors.Is(err, sluice.ErrInvalidLimit) {
		return
	}
	f.storeErrors.Add(1)
	var of []sluice.Check
	for i := range checks {
		if asked[i] != 0 {
			of = append(of, checks[i])
		}
	}
	var nodeBuf [4]*node
	ns := f.nodesOf(of, nodeBuf[:0])
	for _, n := range blame(err, ns) {
		n.storeErrors.Add(1)
	}
}
