package sluice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Polling bounds of Wait for a refused concurrency check: the first wait
// and the longest, between which each wait doubles.
const (
	waitPollMin = 2 * time.Millisecond
	waitPollMax = 100 * time.Millisecond
)

// Wait decides checks as Allow does and, while they are refused, waits and
// decides them again, until they are admitted (it returns nil and d holds
// the admission) or it gives up with an error (d holds the last refusal).
// An admission by a leaky-bucket queue comes back at once with its
// d.Delay, which Wait does not sleep: the caller waits it before the work
// proceeds, as after Allow.
//
// After a refusal Wait sleeps the decision's RetryAfter, the wait after
// which the checks fit if nothing else arrives. A refused concurrency
// check fits as soon as a lease is given back, which RetryAfter cannot
// foresee: Wait then also wakes when Release gives back a lease through
// this Limiter, and decides again at intervals growing from 2ms to 100ms
// (with jitter) to see leases given back elsewhere (another Limiter,
// another process sharing the store).
//
// Wait gives up when ctx is done, with an error wrapping ctx.Err(); at once,
// with an error wrapping context.DeadlineExceeded, when no enforcing
// concurrency check is refused and RetryAfter ends after ctx's deadline (as
// x/time/rate's Limiter.Wait does); at once when a check can never fit
// (RetryAfter is Never: a cost above the limit's burst); and on any error
// Allow returns.
func (l *Limiter) Wait(ctx context.Context, checks []Check, d *Decision) error {
	poll := waitPollMin
	for {
		l.waiting.Add(1)
		l.mu.Lock()
		released := l.released
		l.mu.Unlock()
		err := l.Allow(ctx, checks, d)
		if err != nil || d.Allowed {
			l.waiting.Add(-1)
			return err
		}
		sleep, leased := d.RetryAfter, refusesLease(checks, d)
		if sleep == Never { // a cost above a burst, which no release changes
			l.waiting.Add(-1)
			return fmt.Errorf("sluice: wait: limit %q never admits this call (cost above its burst)", d.Limit.Name())
		}
		if leased {
			sleep = min(sleep, poll/2+rand.N(poll/2+1))
			poll = min(2*poll, waitPollMax)
		} else if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < sleep {
			l.waiting.Add(-1)
			return fmt.Errorf("sluice: wait: %s would end after the context's deadline: %w", sleep, context.DeadlineExceeded)
		}
		err = sleepUntil(ctx, sleep, released)
		l.waiting.Add(-1)
		if err != nil {
			return fmt.Errorf("sluice: wait: %w", err)
		}
	}
}

// refusesLease reports whether an enforcing concurrency check of checks
// refused in d (a shadow one holds nothing back).
func refusesLease(checks []Check, d *Decision) bool {
	for i := range checks {
		if !d.Statuses[i].Allowed && !checks[i].Limit.shadow && checks[i].Limit.alg == AlgorithmConcurrency {
			return true
		}
	}
	return false
}

// sleepUntil waits for d to pass or released to close, whichever comes
// first, or returns ctx.Err() when ctx is done first.
func sleepUntil(ctx context.Context, d time.Duration, released <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
