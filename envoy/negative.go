package envoy

import (
	"context"
	"time"

	"github.com/sluice-dev/sluice"
)

// A descriptor with is_negative_hits gives its cost back, as
// envoyproxy/ratelimit takes its hits_addend off the counter of its
// window, never below 0, and answers it OK: Envoy gives back units it
// charged before. The descriptor has no check of its own, is never over
// its limit and refuses no request.
//
// sluice gives back to a fixed window only, at most what the window
// counted (a caller never holds more than the limit), and nothing to a
// window that went over its limit, before the request or in it (a check
// of the request refused by it, which settle spent and marked over):
// envoyproxy/ratelimit counted the
// refused hits past the limit, which sluice did not (it spent what was
// left and marked the window over, see settle.go), so how much of a
// give-back envoyproxy/ratelimit keeps below its limit is unknown, and
// giving none back refuses what it might admit rather than the reverse.
// Other algorithms give nothing back: a bucket keeps no count to take
// units from (see sluice.Refunder), and a sliding window would give back
// units that envoyproxy/ratelimit's window no longer counts. Nor does a
// requests_per_unit 0 rule's record of hits.
//
// The units go back by sluice.Limiter.Refund, with a receipt of the
// store's window: the last microsecond of the window that the peek's
// ResetAfter ends, after every charge the window counted (a store gives
// nothing back for a receipt older than the key's state), told while the
// store's clock is off the service's by less than half a window; a
// receipt of another window gives nothing back. A store that takes back
// less than it was given (that receipt, or a key reset or lost since the
// peek) is not believed: the descriptor reports what a peek after the
// refunds finds its limit holds, as envoyproxy/ratelimit reports its
// counter after the decrement.

// give is a limit that descriptors of a request give units back to:
// identical descriptors share one.
type give struct {
	check   sluice.Check // a peek at the limit
	aligned bool         // a fixed window counted in its Unix window, whose over-limit record is read
	overID  string       // the state ID of that record (see recordID)
}

// addGive appends the limit l of key to p.gives, or finds the one of the
// same state (sluice.Limit.ID), an identical descriptor's, and returns its
// index; overID is the state ID of the limit's over-limit record.
func (p *plan) addGive(key string, l sluice.Limit, overID string, aligned bool) int {
	for j := range p.gives {
		if c := &p.gives[j].check; c.Key == key && c.Limit.ID() == l.ID() {
			return j
		}
	}
	p.gives = append(p.gives, give{check: sluice.Check{Key: key, Limit: l}, aligned: aligned, overID: overID})
	return len(p.gives) - 1
}

// peekGives reads, before the request is decided, the limits its
// descriptors give units back to (and the over-limit records of fixed
// windows counted in their Unix windows), into each negative slot's peek;
// scratch is working memory. An error leaves the request undecided.
func (p *plan) peekGives(ctx context.Context, l *sluice.Limiter, scratch *sluice.Decision) error {
	for from := 0; from < len(p.gives); {
		p.batch = p.batch[:0]
		to := from
		for ; to < len(p.gives) && len(p.batch)+2 <= sluice.MaxChecks; to++ {
			g := &p.gives[to]
			p.batch = append(p.batch, g.check)
			if g.aligned {
				p.batch = append(p.batch, sluice.Check{Key: g.check.Key + overKey, Limit: overLimit(g.check.Limit, g.overID)})
			}
		}
		*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
		if err := l.Allow(ctx, p.batch, scratch); err != nil {
			return err
		}
		k := 0
		for j := from; j < to; j++ {
			st, over := scratch.Statuses[k], false
			k++
			if p.gives[j].aligned {
				over = scratch.Statuses[k].Remaining == 0
				k++
			}
			for i := range p.slots {
				if s := &p.slots[i]; s.give == j {
					s.peek, s.left = st, st.Remaining
					if over {
						s.cost = 0 // nothing goes back to a window that went over
					}
				}
			}
		}
		from = to
	}
	return nil
}

// giveBack gives back, once the request is decided (as d, settled), what
// its negative descriptors give to fixed windows: each in turn as much of
// its cost as the window counted and the ones before it did not take back;
// nothing to a window that the request went over, whose slots' left is 0.
// A store may take back less than it was given (nothing, for a receipt of
// a window it no longer counts: its clock far off the service's, the key's
// state reset or lost since the peek), so confirm then reads what each
// such window holds, and each slot's left becomes what the limit holds
// after its give-back, never more than that. An error of a refund gives
// that window nothing back (the answer stays what the peeks said). now is
// the service's time.
func (p *plan) giveBack(ctx context.Context, l *sluice.Limiter, now time.Time, d, scratch *sluice.Decision) {
	p.order, p.batch = p.order[:0], p.batch[:0]
	for j := range p.gives {
		g := &p.gives[j]
		if g.check.Limit.Algorithm() != sluice.AlgorithmFixedWindow {
			continue
		}
		if p.wentOver(g, d) {
			p.setLeft(j, 0)
			continue
		}
		var given, peeked int64
		for i := range p.slots {
			s := &p.slots[i]
			if s.give != j {
				continue
			}
			peeked = s.peek.Remaining
			used := max(g.check.Limit.Quantity()-peeked, 0)
			given += min(s.cost, used-given)
			s.left = peeked + given
		}
		if given == 0 {
			continue
		}
		c := [1]sluice.Check{g.check}
		c[0].Cost = given
		*scratch = sluice.Decision{Allowed: true, Statuses: append(scratch.Statuses[:0], sluice.Status{Allowed: true})}
		scratch.Statuses[0].Charged = receipt(g.check.Limit, now, p.slotPeek(j).ResetAfter)
		if l.Refund(ctx, c[:], scratch) != nil {
			p.setLeft(j, peeked)
			continue
		}
		p.order = append(p.order, j)
		p.batch = append(p.batch, g.check) // a peek: g.check costs nothing
	}
	if len(p.batch) > 0 {
		p.confirm(ctx, l, scratch)
	}
}

// confirm peeks, in one call, at the limits p.order lists (p.batch), that
// refunds were given to, and lowers each of their slots' left to what the
// limit holds: envoyproxy/ratelimit answers a give-back with its counter
// after it, and a store that skipped a refund gave nothing back. On an
// error what was given back is unknown, and each slot reports what its
// peek found before.
func (p *plan) confirm(ctx context.Context, l *sluice.Limiter, scratch *sluice.Decision) {
	*scratch = sluice.Decision{Statuses: scratch.Statuses[:0], Violated: scratch.Violated[:0]}
	if l.Allow(ctx, p.batch, scratch) != nil {
		for _, j := range p.order {
			p.setLeft(j, p.slotPeek(j).Remaining)
		}
		return
	}
	for k, j := range p.order {
		held := scratch.Statuses[k].Remaining
		for i := range p.slots {
			if s := &p.slots[i]; s.give == j {
				s.left = min(s.left, held)
			}
		}
	}
}

// wentOver reports whether d refused a check of the request that counts
// in the state g gives back to: settle spent what was left of that window
// and marked it over.
func (p *plan) wentOver(g *give, d *sluice.Decision) bool {
	for k := range d.Statuses {
		c := &p.checks[k]
		if !d.Statuses[k].Allowed && c.Key == g.check.Key && c.Limit.ID() == g.check.Limit.ID() {
			return true
		}
	}
	return false
}

// setLeft sets the left of every slot that gives back to p.gives[j].
func (p *plan) setLeft(j int, left int64) {
	for i := range p.slots {
		if s := &p.slots[i]; s.give == j {
			s.left = left
		}
	}
}

// slotPeek returns the peek of the limit of p.gives[j].
func (p *plan) slotPeek(j int) sluice.Status {
	for _, s := range p.slots {
		if s.give == j {
			return s.peek
		}
	}
	return sluice.Status{}
}

// receipt returns a receipt (sluice.Status.Charged) of a charge of the
// fixed window l that a peek at now found resetAfter from its end: the
// last microsecond of that window, in µs since sluice.Epoch, so that it
// is no older than any state that counted a charge of the window. The
// window's end is a multiple of l's window from Epoch on the store's
// clock, so rounding now plus resetAfter to the nearest such multiple
// finds it while the store's clock is less than half a window off the
// service's.
func receipt(l sluice.Limit, now time.Time, resetAfter time.Duration) int64 {
	w := int64(l.Window() / time.Microsecond)
	end := sluice.MicrosSinceEpoch(now) + int64(resetAfter/time.Microsecond)
	return floorDiv(end+w/2, w)*w - 1
}
