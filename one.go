package sluice

import (
	"context"
	"fmt"
	"unsafe"
)

// AllowOne decides one check, the call most requests make: it is AllowInto
// for the single check c, without a Decision. It writes c's Status into st
// and reports whether the call is admitted: st.Allowed, except that a shadow
// limit never refuses (st.Allowed then says whether it would have). When
// refused, st.RetryAfter is the shortest wait after which the same call
// fits, if nothing else arrives.
//
// It does less than AllowInto — no limit copied into a Decision, no time
// converted, no list of violated limits — so it is the cheaper of the two
// (BENCHMARKS.md measures both), and it allocates nothing. An error (an
// invalid check, a store that could not decide) is never a decision: st is
// then undefined and nothing was consumed. An admitted AlgorithmConcurrency
// check holds its lease until ReleaseOne.
func (l *Limiter) AllowOne(ctx context.Context, st *Status, c *Check) (bool, error) {
	return l.allowOne(ctx, st, c)
}

// allowOne is AllowOne for an invalid check, or for a Store that does not
// report its time.
func (l *Limiter) allowOne(ctx context.Context, st *Status, c *Check) (bool, error) {
	if err := c.validate(); err != nil {
		return false, fmt.Errorf("check 0: %w", err)
	}
	if err := l.store.Apply(ctx, one(c), oneStatus(st)); err != nil {
		return false, fmt.Errorf("sluice: %w", err)
	}
	return st.Allowed || c.Limit.shadow, nil
}

// one returns the call of the single check c: a slice over c itself.
func one(c *Check) []Check { return (*[1]Check)(unsafe.Pointer(c))[:] }

// oneStatus returns a slice over st, the Status of a call of one check.
func oneStatus(st *Status) []Status { return (*[1]Status)(unsafe.Pointer(st))[:] }

// ReleaseOne gives back the concurrency lease that AllowOne took for c when
// it wrote st: call it when the admitted work ends (once). For other
// algorithms, and for a call that took no lease, it does nothing. The
// store must be a Releaser.
func (l *Limiter) ReleaseOne(ctx context.Context, st *Status, c *Check) error {
	if st.Lease == 0 {
		return nil
	}
	return l.release(ctx, one(c), []int64{st.Lease})
}
