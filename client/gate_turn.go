package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// turn lines up the waiters of a Gate after a refusal, so that N waiters
// do not all wake at the same RetryAfter and ask N times for the one unit
// that has come free. While nobody is refused, nobody waits for a turn:
// each waiter asks as it comes, as many at once as come, and an answer
// that takes long (a decision API that hangs) holds up no other waiter's.
// A refused waiter takes the turn, sleeps the refusal's wait and asks
// again, holding it until it is admitted or fails; a waiter that comes
// while anyone holds the turn or waits for it lines up behind them, and
// asks only when its turn comes. The admitted sleep their Delay after
// giving the turn on. A turn is taken with a context, unlike a mutex, so
// that a cancelled waiter leaves the line at once.
type turn struct {
	ch   chan struct{}
	line atomic.Int64 // waiters holding the turn or waiting for it
}

func newTurn() *turn { return &turn{ch: make(chan struct{}, 1)} }

// take waits for the turn. A context that has ended takes no turn, even a
// free one (select would pick either at random): its waiter spends nothing.
// A free turn is taken at once; the wait for one, whose end is not known,
// ends when what is left of a Transport's Retry.MaxWait has passed (see
// boundWait), with an error wrapping ErrWaitTooLong.
func (t *turn) take(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.line.Add(1)
	select {
	case t.ch <- struct{}{}:
		return nil
	default:
	}
	defer blocked(ctx, time.Now())
	wctx, stop := boundWait(ctx)
	defer stop()
	select {
	case t.ch <- struct{}{}:
		return nil
	case <-wctx.Done():
		t.line.Add(-1)
		return tooLong(ctx, "in line")
	}
}

func (t *turn) give() {
	<-t.ch
	t.line.Add(-1)
}

// A refusal is a decision not to let a Wait's units go yet.
type refusal struct {
	retryAfter time.Duration // sluice.Never: no wait can admit them
	limit      string        // the refusing limit's name
	burst      int64         // its burst, or 0 when not known
}

// admit calls ask until it admits (a nil refusal and a nil error) or
// fails, and returns its error. ask is called without the turn unless
// others are lined up for it; a refusal takes the turn, whose holder
// sleeps what remains of the refusal's wait and asks again. A refusal
// that no wait can end (sluice.Never), or whose wait would pass maxHint,
// what is left of a Transport's Retry.MaxWait (see checkGateWait) or ctx's
// deadline, is returned at once as ErrExceedsBurst or ErrWaitTooLong; a
// wait in line that outlasts what is left of Retry.MaxWait fails with
// ErrWaitTooLong then (see take). A context that has ended asks nothing.
func (t *turn) admit(ctx context.Context, cost int64, ask func() (*refusal, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lined := false
	if t.line.Load() > 0 {
		if err := t.take(ctx); err != nil {
			return err
		}
		lined = true
	}
	err := func() error {
		for {
			r, err := ask()
			if err != nil || r == nil {
				return err
			}
			refusedAt := time.Now()
			if err := r.hopeless(ctx, cost); err != nil {
				return err
			}
			if !lined {
				if err := t.take(ctx); err != nil {
					return err
				}
				lined = true
			}
			if err := gateSleep(ctx, r.retryAfter-time.Since(refusedAt)); err != nil {
				return err
			}
		}
	}()
	if lined {
		t.give()
	}
	return err
}

// hopeless returns why no wait for r helps a request of cost units: an
// error wrapping ErrExceedsBurst or ErrWaitTooLong; nil when waiting may.
func (r *refusal) hopeless(ctx context.Context, cost int64) error {
	if r.retryAfter == sluice.Never {
		return exceedsBurst(cost, r.limit, r.burst)
	}
	return checkGateWait(ctx, r.retryAfter, maxHint, "gate "+r.limit)
}

// exceedsBurst is a gate's error for a cost that limit, of burst units (0
// when not known), never admits.
func exceedsBurst(cost int64, limit string, burst int64) error {
	if burst > 0 {
		return fmt.Errorf("client: gate: %w: cost %d, %s holds %d", ErrExceedsBurst, cost, limit, burst)
	}
	return fmt.Errorf("client: gate: %w: cost %d, %s", ErrExceedsBurst, cost, limit)
}
