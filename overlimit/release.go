package overlimit

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: a released lease is capacity coming
// back, so the keys' remembered denials are dropped before the store behind
// the cache gives the leases back. It fails if that store is not a
// sluice.Releaser.
func (c *Cache) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	for i := range checks {
		if leases[i] != 0 {
			c.Invalidate(checks[i].Key)
		}
	}
	r, ok := c.next.(sluice.Releaser)
	if !ok {
		return fmt.Errorf("overlimit: the store behind the cache (%T) cannot release leases", c.next)
	}
	return r.Release(ctx, checks, leases)
}
