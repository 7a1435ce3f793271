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

// Wait blocks until checks are admitted together, deciding them as Allow
// does: it returns nil with d holding the admission, or an error with d
// holding the last refusal. It returns an error at once when a check can
// never fit (RetryAfter is Never: a cost above a limit's burst), when a
// refusal shows that the call cannot be admitted, or a queue's turn start,
// by ctx's deadline (see below), and on any error Allow returns; it returns
// ctx.Err(), wrapped, when ctx is done (a ctx already done when Wait is
// called decides nothing and leaves d as it is, on every store).
//
// After a refusal Wait sleeps, then decides again. A refused check fits no
// sooner than its RetryAfter, the wait after which it fits if nothing else
// arrives, but for a concurrency check: that one fits as soon as a lease is
// given back, which no RetryAfter foresees. Wait sleeps the longest
// RetryAfter of the refused checks other than concurrency ones. When a
// concurrency check refused too, it sleeps on, if it has not slept as long
// already, up to the refusal's RetryAfter (when the oldest lease expires)
// or a poll interval growing from 2ms to 100ms (with jitter), whichever
// comes first, to see leases given back elsewhere (another Limiter, another
// process sharing the store); and in that part of its sleep, a Release
// through this Limiter of a lease of one of the call's concurrency checks
// (the same key and limit ID) wakes it at once. No other Release wakes it:
// not one of other leases, and none while a rate limit's RetryAfter holds
// the call back. A check a store decorator refused by its policy
// (Status.Unavailable: the store could not be reached) counts as a rate
// limit, whatever its algorithm: its RetryAfter is when the store is asked
// again.
//
// As x/time/rate's Limiter.Wait, Wait does not begin a wait that ends after
// ctx's deadline: it returns an error wrapping context.DeadlineExceeded at
// once, having spent nothing, when the longest RetryAfter of the refused
// checks other than concurrency ones ends after the deadline, or when a
// leaky-bucket queue's turn would start after it. A queue that refuses a
// check (it is full) admits it RetryAfter later, if nothing else arrives,
// with a Delay of its whole MaxWait: its turn starts RetryAfter + MaxWait
// from the refusal at the earliest. A concurrency check alone never makes
// Wait give up before the deadline: a lease may come back at any moment.
//
// An admission by a leaky-bucket queue comes back at once with its
// d.Delay, which Wait does not sleep: the caller waits it before the work
// proceeds, as after Allow. A queue's turn that starts after ctx's deadline
// even so (others took places in the queue meanwhile, or the queue had
// room but another check refused the call: a refusal tells no queue's turn
// but a full one's) is refused, as
// x/time/rate's Limiter.Wait refuses a reservation whose delay passes the
// deadline: Wait gives back what the store can give back (the charges of
// fixed and sliding windows, with a Refunder store, and concurrency
// leases), rewrites d as a refusal by each queue whose turn comes too late
// (its RetryAfter its Delay, as httplimit does), and returns an error
// wrapping context.DeadlineExceeded. A queue's slot cannot be given back (a
// bucket keeps no receipt) and stays spent, as do the other buckets'
// charges. What the store fails to give back stays counted (a charge) or
// held until it expires (a lease); the error then says so, and still wraps
// only context.DeadlineExceeded: it is not an ErrStoreUnavailable, which
// would say that nothing was spent.
func (l *Limiter) Wait(ctx context.Context, checks []Check, d *Decision) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sluice: wait: %w", err)
	}
	w := l.listen(checks)
	defer l.unlisten(w)
	poll := waitPollMin
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sluice: wait: %w", err)
		}
		w.clear() // a lease given back from here on is one this decision saw held
		err := l.Allow(ctx, checks, d)
		if err != nil || d.Allowed {
			if err == nil {
				err = l.refuseLate(ctx, checks, d)
			}
			return err
		}
		if d.RetryAfter == Never { // a cost above a burst, which no release changes
			return fmt.Errorf("sluice: wait: limit %q never admits this call (cost above its burst)", d.Limit.Name())
		}
		b := boundsOf(checks, d)
		if deadline, ok := ctx.Deadline(); ok {
			if err := b.late(checks, time.Until(deadline)); err != nil {
				return err
			}
		}
		sleep, wake := b.fit, (<-chan struct{})(nil)
		if b.leased {
			sleep = max(b.fit, min(d.RetryAfter, poll/2+rand.N(poll/2+1)))
			poll = min(2*poll, waitPollMax)
			wake = w.wake
		}
		// No lease given back lets the call through before b.fit: only
		// the rest of the sleep listens.
		err = sleepUntil(ctx, b.fit, nil)
		if err == nil && sleep > b.fit {
			err = sleepUntil(ctx, sleep-b.fit, wake)
		}
		if err != nil {
			return fmt.Errorf("sluice: wait: %w", err)
		}
	}
}

// waitBounds is what a refusal tells Wait of the call's next admission, if
// nothing else arrives.
type waitBounds struct {
	// fit is the longest RetryAfter of the refused enforcing checks other
	// than concurrency ones: the call fits no sooner.
	fit time.Duration
	// turn is the latest a leaky-bucket queue's turn starts, at the
	// earliest, and queue the check whose turn it is (-1: none).
	turn  time.Duration
	queue int
	// leased reports that an enforcing concurrency check refused: a lease
	// given back may make the call fit at any moment.
	leased bool
}

// boundsOf returns the bounds of the refusal d of checks. A check refused
// by a store decorator's policy (Status.Unavailable) counts by its
// RetryAfter, when the store is asked again, whatever its algorithm.
func boundsOf(checks []Check, d *Decision) waitBounds {
	b := waitBounds{queue: -1}
	for i := range checks {
		lim, st := &checks[i].Limit, &d.Statuses[i]
		if lim.shadow {
			continue
		}
		switch {
		case st.Allowed:
		case lim.alg == AlgorithmConcurrency && !st.Unavailable:
			b.leased = true
		default:
			b.fit = max(b.fit, st.RetryAfter)
			// A full queue admits RetryAfter later with a Delay of MaxWait.
			if turn := st.RetryAfter + lim.MaxWait(); lim.maxWait > 0 && !st.Unavailable && turn > b.turn {
				b.turn, b.queue = turn, i
			}
		}
	}
	return b
}

// late returns an error wrapping context.DeadlineExceeded when b shows that
// the call of checks cannot be admitted, or a queue's turn start, within
// left; nil otherwise.
func (b *waitBounds) late(checks []Check, left time.Duration) error {
	switch {
	case b.turn > left && b.turn > b.fit:
		return fmt.Errorf("sluice: wait: limit %q's queue turn in %s at the earliest would start after the context's deadline: %w",
			checks[b.queue].Limit.name, b.turn, context.DeadlineExceeded)
	case b.fit > left:
		return fmt.Errorf("sluice: wait: %s would end after the context's deadline: %w", b.fit, context.DeadlineExceeded)
	}
	return nil
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

// leaseID names the state a concurrency check's leases are kept in: its
// key and its limit's ID.
type leaseID struct{ key, id string }

// A listener is a Wait listening for the leases of its call's enforcing
// concurrency checks given back through its Limiter: Release leaves a token
// in wake (which holds one) for each it gives back.
type listener struct {
	wake chan struct{}
	ids  []leaseID
}

// clear takes the token out of w, if any; a nil w holds none.
func (w *listener) clear() {
	if w == nil {
		return
	}
	select {
	case <-w.wake:
	default:
	}
}

// listen registers and returns a listener for the leases of checks'
// enforcing concurrency checks; nil when there are none.
func (l *Limiter) listen(checks []Check) *listener {
	var w *listener
	for i := range checks {
		lim := &checks[i].Limit
		if lim.alg != AlgorithmConcurrency || lim.shadow {
			continue
		}
		if w == nil {
			w = &listener{wake: make(chan struct{}, 1)}
		}
		w.ids = append(w.ids, leaseID{checks[i].Key, lim.stateID()})
	}
	if w == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.listeners == nil {
		l.listeners = make(map[leaseID]map[*listener]struct{})
	}
	for _, id := range w.ids {
		if l.listeners[id] == nil {
			l.listeners[id] = make(map[*listener]struct{})
		}
		l.listeners[id][w] = struct{}{}
	}
	l.waiting.Add(1)
	return w
}

// unlisten removes w, which listen returned; a nil w does nothing.
func (l *Limiter) unlisten(w *listener) {
	if w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting.Add(-1)
	for _, id := range w.ids {
		delete(l.listeners[id], w)
		if len(l.listeners[id]) == 0 {
			delete(l.listeners, id)
		}
	}
}

// wake leaves a token for the listeners of each lease of checks that leases
// (one per check, zero: none) gave back.
func (l *Limiter) wake(checks []Check, leases []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range checks {
		if leases[i] == 0 {
			continue
		}
		for w := range l.listeners[leaseID{checks[i].Key, checks[i].Limit.stateID()}] {
			select {
			case w.wake <- struct{}{}:
			default: // a token is already there
			}
		}
	}
}

// sleepUntil waits for d to pass or wake to deliver, whichever comes
// first, or returns ctx.Err() when ctx is done first. A nil wake never
// delivers; a d ≤ 0 returns nil at once.
func sleepUntil(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
