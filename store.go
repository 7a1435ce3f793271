package sluice

import "context"

// A Store keeps the state of every (key, limit) and decides batches of checks
// atomically. Implementations: package memory (in-process) and package redis
// (shared by many instances). Both must give the same decisions for the same
// sequence of (time, checks).
//
// A Store of your own keeps one State per (Check.Key, Limit.ID(),
// Limit.Algorithm()) — the ID, not the Name, so that a limit renamed with
// WithID keeps its clients' state — and decides with DecideBatch: it loads
// and locks the states of a call's checks, calls DecideBatch at its time
// in µs since Epoch (see MicrosSinceEpoch), and writes back the states
// when DecideBatch reports a change (returning DecideBatch's error, if
// any, from Apply). A concurrency lease is given back with Limit.Release
// (see Releaser).
type Store interface {
	// Apply decides checks as one atomic unit at the store's current time and
	// writes one Status per check into out, which has len(checks). If any
	// enforcing (non-shadow) check is refused, nothing is consumed — not even
	// by the checks that fit — and those report their current state as a
	// peek would. A shadow check consumes only when the batch is admitted and
	// it fits itself.
	//
	// checks have passed ValidateChecks. An error means no decision was made
	// (and wraps ErrStoreUnavailable when the store could not be reached,
	// ErrInvalidCheck when out is not as long as checks or a check cannot be
	// decided); out is then undefined and nothing was consumed.
	Apply(ctx context.Context, checks []Check, out []Status) error
}

// A Releaser is a Store that gives back the leases of AlgorithmConcurrency
// checks when the work they admitted ends. Both stores of this module are
// Releasers.
type Releaser interface {
	// Release gives back, for each check, the lease of Cost units stamped
	// leases[i] (Status.Lease of the admitting call). Checks of other
	// algorithms and zero leases are skipped; a lease that has already
	// expired is ignored. leases has len(checks).
	Release(ctx context.Context, checks []Check, leases []int64) error
}
