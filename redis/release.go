package redis

import (
	"context"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: for each AlgorithmConcurrency check
// with a non-zero lease, it gives back the lease of Cost units stamped
// leases[i] (Status.Lease of the admitting call), so that the units are
// free again before the lease time runs out. Other checks, zero leases and
// leases that have already expired are skipped, and so is a lease taken
// before a Reset of its key and limit: the lease book built since never
// held it (see Store.Reset), as on the memory store. Releases of keys in one
// Cluster slot are one script run; an error wraps
// sluice.ErrStoreUnavailable as Apply's do, and leaves the leases to
// expire. Leases not one per check, or a check with a lease whose limit
// cannot be decided, release nothing: the error wraps
// sluice.ErrInvalidCheck, as the memory store's does.
func (s *Store) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if err := s.unusable("release script"); err != nil {
		return err
	}
	return s.stamped(ctx, s.scripts.release, "release script", checks, leases, func(a sluice.Algorithm) bool {
		return a == sluice.AlgorithmConcurrency
	}, true)
}

var _ sluice.Releaser = (*Store)(nil)
