package client

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sluice-dev/sluice"
)

// waiter is a request's place in a host's line.
type waiter struct{ cost int64 }

// acquire waits until a send of cost units is granted (a cost above
// sluice.MaxQuantity counts as it: no quota holds more, and the counts stay
// far from overflowing). It fails at once with ErrWaitTooLong when the wait
// has a known end beyond maxWait or the context's deadline (the end of the
// last of the holds known to follow each other, see holdEnd), with
// ErrWaitTooLong once it has waited maxWait when its end is not known (a
// wait for a concurrency quota's slot, which comes back when a request
// ends, however long that takes: see waitsForSlots), and with the
// context's error when it is cancelled, or had ended already.
//
// Requests that must wait are granted first come, first served: they line
// up, only the first of the line is tried, and one that arrives while
// others wait takes its place behind them, so that a request sent as
// another's answer makes room (a batch worker's next) never takes the room
// that those waiting were woken for. A request of cost 0, which takes no
// room, does not line up.
func (h *hostState) acquire(ctx context.Context, host string, cost int64, maxWait time.Duration) (ticket, time.Duration, error) {
	return h.acquireWith(ctx, host, cost, 0, maxWait)
}

// acquireWith is acquire for a request whose content is bytes long (-1:
// unknown), which its host's body state, if it has one, counts too (see
// tryWith); while the line's first waits for content bytes alone, a
// request without content does not wait behind it (see turn). Content
// larger than a whole quota of content bytes fails at once (tooLarge).
func (h *hostState) acquireWith(ctx context.Context, host string, cost, bytes int64, maxWait time.Duration) (ticket, time.Duration, error) {
	cost = min(cost, sluice.MaxQuantity)
	var waited time.Duration
	if err := ctx.Err(); err != nil {
		return ticket{}, 0, err // it would not be sent: spend nothing
	}
	start := time.Now()
	var me *waiter // the request's place in the line, while it has one
	defer func() {
		if me != nil {
			h.leave(me)
		}
	}()
	for {
		h.mu.Lock()
		if err := h.tooLarge(bytes, host); err != nil {
			h.mu.Unlock()
			return ticket{}, waited, err
		}
		now := time.Now()
		tk, ok, wake, first := h.turn(&me, cost, bytes, now)
		var end time.Time
		if !ok && !wake.IsZero() {
			end = h.knownEnd(cost, bytes, wake, now)
		}
		stalled := h.stalledAt()
		if h.body != nil {
			h.body.mu.Lock()
			stalled = earlier(stalled, h.body.stalledAt())
			h.body.mu.Unlock()
		}
		changed := h.changed
		h.mu.Unlock()
		if ok {
			return tk, waited, nil
		}
		left := maxWait - now.Sub(start)
		switch {
		case !end.IsZero():
			if err := checkWait(ctx, end.Sub(now), left, "quota of "+host); err != nil {
				return tk, waited, err
			}
		case left <= 0:
			return tk, waited, fmt.Errorf("%w: quota of %s: no room within the longest wait, %v", ErrWaitTooLong, host, maxWait)
		}
		// Answers in flight may free the host sooner, or, when none comes,
		// their write-off; the rest of the line waits for its first. A
		// wait whose end is not known ends with maxWait.
		var timer *time.Timer
		var fired <-chan time.Time
		if first {
			wake = earlier(wake, stalled)
		} else {
			wake = time.Time{}
		}
		if wake = earlier(wake, now.Add(left)); !wake.IsZero() {
			timer = time.NewTimer(wake.Sub(now))
			fired = timer.C
		}
		select {
		case <-changed:
		case <-fired:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		waited += time.Since(now)
		if err := ctx.Err(); err != nil {
			return tk, waited, err
		}
	}
}

// hopeless returns the error acquireWith would fail a request of cost
// units and bytes of content (-1: unknown) with at once, were it tried
// now: content larger than a whole quota of content bytes, or a wait for
// the host's quotas with a known end beyond maxWait or the context's
// deadline; else nil. It spends nothing: a request is so refused before it
// spends a Gate's units.
func (h *hostState) hopeless(ctx context.Context, host string, cost, bytes int64, maxWait time.Duration) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.tooLarge(bytes, host); err != nil {
		return err
	}
	now := time.Now()
	how, wake := h.admits(min(cost, sluice.MaxQuantity), now)
	if how != sendHeld && h.body != nil {
		h.body.mu.Lock()
		how, wake = h.body.admits(h.body.contentCost(bytes), now)
		h.body.mu.Unlock()
	}
	if how == sendHeld && !wake.IsZero() {
		if end := h.knownEnd(cost, bytes, wake, now); !end.IsZero() {
			return checkWait(ctx, end.Sub(now), maxWait, "quota of "+host)
		}
	}
	return nil
}

// knownEnd returns when the wait of a request of cost units and bytes of
// content (-1: unknown), told at now to wait until wake (not zero), is
// known to end: with the last of the holds that follow each other (a
// Retry-After, then a quota spent until a later reset, see heldUntil).
// A wait for a concurrency quota's slot (waitsForSlots) has no known end
// but that of the holds beside it: the zero time when none holds it
// beyond now. h.mu is held.
func (h *hostState) knownEnd(cost, bytes int64, wake, now time.Time) time.Time {
	end := h.heldUntil(cost, bytes, now)
	if h.waitsForSlots(cost, now) {
		if end.After(now) {
			return end
		}
		return time.Time{}
	}
	return later(wake, end)
}

// holdEnd returns when the host's holds on a request of cost units and
// bytes of content (-1: unknown) end, as far as they are known at now and
// nothing changes meanwhile: the latest of its Retry-After, its probe and
// every remembered policy's wait, in its quotas and in those of content
// bytes; now when none holds it, or none with a known end. It spends
// nothing: a retry is so refused before it waits.
func (h *hostState) holdEnd(cost, bytes int64, now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.heldUntil(cost, bytes, now)
}

// heldUntil is holdEnd with h.mu held.
func (h *hostState) heldUntil(cost, bytes int64, now time.Time) time.Time {
	end := later(now, h.knownHold(min(cost, sluice.MaxQuantity), now))
	if h.body != nil {
		h.body.mu.Lock()
		end = later(end, h.body.knownHold(h.body.contentCost(bytes), now))
		h.body.mu.Unlock()
	}
	return end
}

// knownHold is the latest known end of the holds on a send of cost units
// at now (the zero time when none has one): its Retry-After and, when the
// host learns, the bounds' probe (but for a wait for a concurrency quota's
// slot, which has no known end: see waitsForSlots) and every remembered
// policy's wait, where admits reports the first hold it meets. h.mu is
// held.
func (h *hostState) knownHold(cost int64, now time.Time) time.Time {
	end := h.holdUntil
	if !h.learn || cost == 0 {
		return end
	}
	how := sendPlain
	if h.mode == modeKnown {
		var wake time.Time
		if how, wake = h.admitsKnown(cost, now); how == sendHeld {
			if !h.waitsForSlots(cost, now) {
				end = later(end, wake) // a slot's wait has no known end
			}
			how = sendPlain
		}
	}
	if ok, at := h.policiesAdmit(cost, how, now); !ok {
		end = later(end, at)
	}
	return end
}

// turn tries a send of cost units and bytes of content at now for the
// request whose place in the line is *me (nil: it has none), as tryWith
// does, when the request may be tried: when it is first in line, or there
// is no line. Otherwise, or when it must wait, it takes its place at the
// end of the line (in *me) and reports the wait of the line's first, the
// soonest it can be granted; first reports whether it was tried. Granted, it leaves the line, and the
// next one is woken to be tried. A request that spends nothing (no cost,
// no content) takes no room and does not line up, and one without content
// is tried, in line or not, while the line's first waits for content
// bytes alone: it does not take what the first waits for. h.mu is held.
func (h *hostState) turn(me **waiter, cost, bytes int64, now time.Time) (tk ticket, ok bool, wake time.Time, first bool) {
	if cost == 0 && (bytes == 0 || h.body == nil) {
		tk, ok, wake = h.tryWith(cost, bytes, now)
		return tk, ok, wake, true
	}
	if *me == nil && len(h.line) > 0 || *me != nil && h.line[0] != *me {
		tried := bytes == 0 && h.lineOnBody
		if tried {
			if tk, ok, wake = h.tryWith(cost, 0, now); ok {
				if *me != nil {
					h.line = slices.DeleteFunc(h.line, func(w *waiter) bool { return w == *me })
					*me = nil
				}
				return tk, true, wake, true
			}
		}
		if *me == nil {
			*me = &waiter{cost: cost}
			h.line = append(h.line, *me)
		}
		if tried {
			return tk, false, wake, true
		}
		return tk, false, h.lineWake, false
	}
	tk, ok, wake, byBody := h.tryContent(cost, bytes, now)
	switch {
	case ok && *me != nil:
		h.line[0] = nil
		h.line = h.line[1:]
		*me, h.lineWake, h.lineOnBody = nil, time.Time{}, false
		h.broadcast() // the next in line may be granted too
	case !ok && *me == nil:
		*me = &waiter{cost: cost}
		h.line = append(h.line, *me)
		h.lineWake, h.lineOnBody = wake, byBody
	case !ok:
		h.lineWake, h.lineOnBody = wake, byBody
	}
	return tk, ok, wake, true
}

// leave takes me, a request that stopped waiting, out of the line; when it
// was first, the next one is woken to be tried.
func (h *hostState) leave(me *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.Index(h.line, me)
	if i < 0 {
		return
	}
	h.line = slices.Delete(h.line, i, i+1)
	if i == 0 {
		h.lineWake, h.lineOnBody = time.Time{}, false
		h.broadcast()
	}
}

// checkWait reports an error if a wait of d would outlast maxWait or ctx's
// deadline (then waiting is pointless: fail now, as x/time/rate does).
func checkWait(ctx context.Context, d, maxWait time.Duration, what string) error {
	if d > maxWait {
		return fmt.Errorf("%w: %s: %v is longer than the longest wait, %v", ErrWaitTooLong, what, d.Round(time.Millisecond), maxWait)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return fmt.Errorf("%w: %s: waiting %v would pass the context deadline: %w",
			ErrWaitTooLong, what, d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	return nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// earlier returns the earlier of a and b, the zero time meaning "never".
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
