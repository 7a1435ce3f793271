package overlimit

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Refund implements sluice.Refunder: a refund is capacity coming back, so
// the keys' remembered denials are dropped (a refusal remembered before it
// may no longer hold) before the store behind the cache refunds. It fails
// if that store is not a sluice.Refunder, and with an error wrapping
// sluice.ErrStoreUnavailable on the zero Cache.
func (c *Cache) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if c.next == nil {
		return fmt.Errorf("overlimit: %w: no store behind the cache", sluice.ErrStoreUnavailable)
	}
	if err := c.forgetStamped(checks, charged); err != nil {
		return err
	}
	r, ok := c.next.(sluice.Refunder)
	if !ok {
		return fmt.Errorf("overlimit: the store behind the cache (%T) cannot refund charges", c.next)
	}
	return r.Refund(ctx, checks, charged)
}

var _ sluice.Refunder = (*Cache)(nil)
