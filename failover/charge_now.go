package failover

import (
	"context"
	"time"

	"github.com/sluice-dev/sluice"
)

// A chargeOutcome is what came of a charge made at once (see chargeNow).
type chargeOutcome uint8

const (
	chargedNow     chargeOutcome = iota // taken: nothing owed on the keys
	chargeFailed                        // the primary failed it
	chargeCutShort                      // the call's bound ended first, or left no time
)

// chargeNow charges the primary at once with the units a local decision
// admitted on checks, keys of the nodes ns, which answer (the call was
// decided locally because another of its nodes failed or had its breaker
// open): once charged, their accounts are closed and nothing is owed on
// them, so that another instance deciding those keys on the primary alone
// finds these units counted, and the nodes need not return. It charges as
// a call does before the primary decides (see settle: under each charge's
// id, taken once; with a few other keys of ns), within the bound of a
// call that charges from begun, when the call began (zero: now). A charge
// that fails or is cut short leaves the accounts open for a later call,
// in doubt if sent; a failure is a store error, counted as Settle's are.
func (f *Store) chargeNow(ctx context.Context, checks []sluice.Check, ns []*node, begun time.Time) chargeOutcome {
	ctx, cancel := f.chargeBoundedFrom(ctx, begun)
	defer cancel()
	if ctx.Err() != nil {
		return chargeCutShort
	}
	err := f.settle(ctx, checks, ns)
	switch {
	case err == nil:
		return chargedNow
	case callerGone(ctx) != nil:
		return chargeCutShort
	}
	asked := make([]int64, len(checks))
	for i := range asked {
		asked[i] = 1
	}
	f.sideFailed(ctx, checks, asked, err)
	return chargeFailed
}
