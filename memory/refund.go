package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

// Refund implements sluice.Refunder: for each check of a fixed window,
// sliding counter or sliding log with a non-zero receipt (Status.Charged),
// it takes the check's Cost back out of the key's state while the window
// that counted it still counts it. A key the store no longer holds (swept,
// evicted, or past its expiry: see the package doc) has nothing to give
// back. A receipt given at or before a Reset of the key is not refunded
// into the state it counts since (see Reset), nor one given at or before
// an eviction of a state that still counted something (the eviction is
// noted as a reset is, at a time no earlier than any receipt the state
// gave), nor one given before the expiry of such a state that the store
// forgot or read as absent since (under a limit of the same ID with a
// longer window, it may have counted the receipt: its expiry is noted as
// an eviction, at the µs before it), as the Redis store leaves a state
// created after the receipt alone. Evictions and expiries are remembered
// with the resets (for two windows and a second, of the longest among
// the parameter sets of the limit's ID and algorithm that any call was
// decided under; a sliding log's, for one), in the same
// bound of 256 per shard, never pushing out a Reset's note: past it, a
// receipt from before an older eviction or expiry may be refunded into
// its key's fresh count, never below zero. ctx is not consulted (see
// Store). It fails when charged is not as long as checks, and when a
// check to refund has a limit that cannot be decided (Limit.Err), with an
// error wrapping sluice.ErrInvalidCheck, and then refunds nothing.
func (s *Store) Refund(_ context.Context, checks []sluice.Check, charged []int64) error {
	if s.zero() {
		return errZero()
	}
	if len(charged) != len(checks) {
		return fmt.Errorf("%w: %d checks with %d charges", sluice.ErrInvalidCheck, len(checks), len(charged))
	}
	for i := range checks {
		c := &checks[i]
		if charged[i] == 0 || !algo.Refundable(algo.Kind(c.Limit.Algorithm())) {
			continue
		}
		if err := c.Limit.Err(); err != nil {
			return fmt.Errorf("memory: refund: check %d: %w: %w", i, sluice.ErrInvalidCheck, err)
		}
	}
	now := s.now()
	for i := range checks {
		c := &checks[i]
		kind := algo.Kind(c.Limit.Algorithm())
		if charged[i] == 0 || !algo.Refundable(kind) {
			continue
		}
		p, _ := algo.NewParams(kind, c.Limit.Quantity(), int64(c.Limit.Window()/time.Microsecond), c.Limit.Burst(), 0)
		if period := c.Limit.Period(); period != 0 {
			p = algo.NewCalendarParams(c.Limit.Quantity(), algo.Period(period), int64(c.Limit.Offset()/time.Microsecond))
		}
		s.update(c, now, func(st sluice.State, reset int64, noted bool) sluice.State {
			if noted && charged[i] <= reset {
				return st // the state since the reset never counted it
			}
			return sluice.State(algo.Refund(&p, algo.State(st), charged[i], c.Cost))
		})
	}
	return nil
}

var _ sluice.Refunder = (*Store)(nil)
