package sluice

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
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
// proceeds, as after Allow. A queue's turn that starts after ctx's deadline
// is refused instead, as x/time/rate's Limiter.Wait refuses a reservation
// whose delay passes the deadline: Wait gives back what the store can give
// back (the charges of fixed and sliding windows, with a Refunder store,
// and concurrency leases), rewrites d as a refusal by each queue whose turn
// comes too late (its RetryAfter its Delay, as httplimit does), and
// returns an error wrapping context.DeadlineExceeded. A queue's slot
// cannot be given back (a bucket keeps no receipt) and stays spent, as do
// the other buckets' charges. What the store fails to give back stays
// counted (a charge) or held until it expires (a lease); the error then
// says so, and still wraps only context.DeadlineExceeded: it is not an
// ErrStoreUnavailable, which would say that nothing was spent.
//
// After a refusal Wait sleeps the decision's RetryAfter, the wait after
// which the checks fit if nothing else arrives. A refused concurrency
// check fits as soon as a lease is given back, which RetryAfter cannot
// foresee: Wait then also wakes when Release gives back a lease through
// this Limiter, and decides again at intervals growing from 2ms to 100ms
// (with jitter) to see leases given back elsewhere (another Limiter,
// another process sharing the store).
//
// Wait gives up when ctx is done, with an error wrapping ctx.Err() (a ctx
// already done when Wait is called decides nothing and leaves d as it is,
// on every store); at once,
// with an error wrapping context.DeadlineExceeded, when no enforcing
// concurrency check is refused and RetryAfter ends after ctx's deadline (as
// x/time/rate's Limiter.Wait does); at once when a check can never fit
// (RetryAfter is Never: a cost above the limit's burst); and on any error
// Allow returns.
func (l *Limiter) Wait(ctx context.Context, checks []Check, d *Decision) error {
	poll := waitPollMin
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sluice: wait: %w", err)
		}
		l.waiting.Add(1)
		l.mu.Lock()
		released := l.released
		l.mu.Unlock()
		err := l.Allow(ctx, checks, d)
		if err != nil || d.Allowed {
			l.waiting.Add(-1)
			if err == nil {
				err = l.refuseLate(ctx, checks, d)
			}
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

// refuseLate turns d, an admission of checks, into a refusal when its
// Delay, a queue's turn, ends after ctx's deadline, as Wait says: it gives
// back the admission's charges and leases, refuses every enforcing check
// whose Delay passes the deadline (its RetryAfter its Delay; the one with
// the longest decides), and returns an error wrapping
// context.DeadlineExceeded. d is left as it is, and nil returned, without a
// deadline or with one the turn starts by.
func (l *Limiter) refuseLate(ctx context.Context, checks []Check, d *Decision) error {
	deadline, ok := ctx.Deadline()
	if !ok || d.Delay == 0 {
		return nil
	}
	left := time.Until(deadline)
	if d.Delay <= left {
		return nil
	}
	delay := d.Delay
	gb := context.WithoutCancel(ctx) // ctx is about done: the give-back still goes
	var kept []string
	if err := l.Release(gb, checks, d); err != nil {
		kept = append(kept, fmt.Sprintf("leases held until they expire (%v)", err))
	}
	if err := l.Refund(gb, checks, d); err != nil {
		kept = append(kept, fmt.Sprintf("charges still counted (%v)", err))
	}
	d.Allowed, d.Violated = false, d.Violated[:0]
	refusing := -1
	for i := range checks {
		st := &d.Statuses[i]
		if checks[i].Limit.shadow || st.Delay <= left {
			continue
		}
		st.Allowed, st.RetryAfter = false, st.Delay
		d.Violated = append(d.Violated, checks[i].Limit.name)
		if refusing < 0 || st.Delay > d.Statuses[refusing].Delay {
			refusing = i
		}
	}
	st := &d.Statuses[refusing]
	d.Limit, d.Remaining, d.ResetAfter, d.RetryAfter = checks[refusing].Limit, st.Remaining, st.ResetAfter, st.RetryAfter
	err := fmt.Errorf("sluice: wait: limit %q's queue turn in %s would start after the context's deadline: %w",
		d.Limit.name, delay, context.DeadlineExceeded)
	if len(kept) > 0 {
		err = fmt.Errorf("%w; not given back: %s", err, strings.Join(kept, "; "))
	}
	return err
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
