package overlimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Refund implements sluice.Refunder: a refund is capacity coming back, so
// once the store behind the cache has refunded (or failed to: it may have
// refunded part), the keys' remembered denials are dropped, those learned
// while the refund was on its way included, and calls then on their way to
// the store remember none (they may describe the state before the refund).
// It fails with an error wrapping errors.ErrUnsupported if that store is
// not a sluice.Refunder, and with one wrapping sluice.ErrStoreUnavailable
// on the zero Cache.
func (c *Cache) Refund(ctx context.Context, checks []sluice.Check, charged []int64) error {
	if c.next == nil {
		return fmt.Errorf("overlimit: %w: no store behind the cache", sluice.ErrStoreUnavailable)
	}
	if err := stampsFor(checks, charged); err != nil {
		return err
	}
	r, ok := c.next.(sluice.Refunder)
	if !ok {
		return fmt.Errorf("overlimit: the store behind the cache (%T) cannot refund charges: %w", c.next, errors.ErrUnsupported)
	}
	err := r.Refund(ctx, checks, charged)
	c.forgetStamped(checks, charged)
	return err
}

var _ sluice.Refunder = (*Cache)(nil)
