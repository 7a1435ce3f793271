package sluice

import (
	"context"
	"math/bits"
	"time"
)

// A Store keeps the state of every (key, limit) and decides batches of checks
// atomically. Implementations: package memory (in-process) and package redis
// (shared by many instances). Both must give the same decisions for the same
// sequence of (time, checks).
type Store interface {
	// Apply decides checks as one atomic unit at the store's current time and
	// writes one Status per check into out, which has len(checks). If any
	// enforcing (non-shadow) check is refused, nothing is consumed — not even
	// by the checks that fit — and those report their current state as a
	// peek would. A shadow check consumes only when the batch is admitted and
	// it fits itself.
	//
	// checks have passed ValidateChecks. An error means no decision was made
	// (and wraps ErrStoreUnavailable when the store could not be reached);
	// out is then undefined and nothing was consumed.
	Apply(ctx context.Context, checks []Check, out []Status) error
}

// A TimedStore is a Store that also reports the time at which it decided,
// by its own clock, so that a caller who needs that time (for headers that
// give a reset as a wall-clock time) reads no clock of its own: Limiter sets
// Decision.At from it. package memory's Store is one.
type TimedStore interface {
	Store
	// ApplyTimed is Apply, also returning the store's time of the decision
	// in µs since Epoch (meaningless when err is not nil).
	ApplyTimed(ctx context.Context, checks []Check, out []Status) (now int64, err error)
}

// A Releaser is a Store that gives back the leases of AlgorithmConcurrency
// checks when the work they admitted ends. Both stores of this module are
// Releasers.
type Releaser interface {
	// Release gives back, for each check, the lease of Cost units stamped
	// leases[i] (Status.Lease of the admitting call). Checks of other
	// algorithms and zero leases are skipped; a lease that has already
	// expired is ignored.
	Release(ctx context.Context, checks []Check, leases []int64) error
}

// LimitKey returns l's name and algorithm: the pair a store keeps l's
// states under (limits that share both share states). It reads them
// through the pointer: each of Limit's value methods copies the whole
// Limit (over 100 bytes), which shows on a store's per-decision path.
func LimitKey(l *Limit) (name string, alg Algorithm) { return l.name, l.alg }

// LagShare is the share of a limit's burst, 1/LagShare, that LagTolerance
// lets a lagging clock add.
const LagShare = 256

// LagTolerance returns the longest lag behind the exact time at which a
// store may decide l: the time in which l refills one unit or 1/LagShare of
// its Burst, whichever is more, rounded down to the nanosecond (Never when
// longer than a Duration holds; 0 for an invalid limit). A store that
// decides at a time lagging the exact one by at most that (memory.Store's
// ticker clock) admits at most that much more than the exact time would.
// It is computed when the Limit is built and read through the pointer as
// LimitKey reads, so that a store's check costs one comparison per
// decision.
func LagTolerance(l *Limit) time.Duration { return time.Duration(l.lag) }

// lagTolerance computes LagTolerance for quantity q per window w µs with
// burst b: ⌊w·1000·max(1, ⌊b/LagShare⌋) / q⌋ ns, in 128 bits (w·1000 <
// 2^55: see MaxWindow), saturated at Never (which no valid limit nears).
func lagTolerance(q, w, b int64) int64 {
	hi, lo := bits.Mul64(uint64(w)*1000, max(1, uint64(b)/LagShare))
	if hi >= uint64(q) {
		return int64(Never)
	}
	ns, _ := bits.Div64(hi, lo, uint64(q))
	return int64(min(ns, uint64(Never)))
}
