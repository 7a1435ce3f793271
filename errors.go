package sluice

import "errors"

var (
	// ErrInvalidLimit is wrapped by every error about a Limit's parameters.
	ErrInvalidLimit = errors.New("invalid limit")

	// ErrInvalidCheck is wrapped by every error about a Check that cannot be
	// decided: empty or oversized key, negative cost, an invalid limit, the
	// same key and limit twice in one call, or too many checks.
	ErrInvalidCheck = errors.New("invalid check")

	// ErrStoreUnavailable is wrapped by a Store's errors when it cannot
	// decide at all (connection refused, timeout, open circuit breaker). It is
	// never a decision: callers apply their failure policy.
	ErrStoreUnavailable = errors.New("store unavailable")
)
