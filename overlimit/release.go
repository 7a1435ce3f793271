package overlimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: a released lease is capacity coming
// back, so the keys' remembered denials are dropped before the store behind
// the cache gives the leases back. It fails with an error wrapping
// errors.ErrUnsupported if that store is not a sluice.Releaser, and with
// one wrapping sluice.ErrStoreUnavailable on the zero Cache.
func (c *Cache) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if c.next == nil {
		return fmt.Errorf("overlimit: %w: no store behind the cache", sluice.ErrStoreUnavailable)
	}
	if err := stampsFor(checks, leases); err != nil {
		return err
	}
	c.forgetStamped(checks, leases)
	r, ok := c.next.(sluice.Releaser)
	if !ok {
		return fmt.Errorf("overlimit: the store behind the cache (%T) cannot release leases: %w", c.next, errors.ErrUnsupported)
	}
	return r.Release(ctx, checks, leases)
}

// stampsFor returns an error wrapping sluice.ErrInvalidCheck when stamps
// (leases, charges' receipts) is not as long as checks.
func stampsFor(checks []sluice.Check, stamps []int64) error {
	if len(stamps) != len(checks) {
		return fmt.Errorf("overlimit: %w: %d checks with %d stamps", sluice.ErrInvalidCheck, len(checks), len(stamps))
	}
	return nil
}

// forgetStamped drops the remembered denials of the keys of the checks
// whose stamp (a lease, a charge's receipt) is not zero: capacity coming
// back to them may end a refusal before its remembered wait. stamps has
// len(checks).
func (c *Cache) forgetStamped(checks []sluice.Check, stamps []int64) {
	for i := range checks {
		if stamps[i] != 0 {
			c.Invalidate(checks[i].Key)
		}
	}
}
