package redis

import (
	"context"

	"github.com/sluice-dev/sluice"
)

// prefetch starts taking e's next lease (e is locked; a check has just
// spent from its current lease at now) when the current one is at low
// water (lease.lowWater) and none is held in reserve, so that calls keep
// spending the current one meanwhile; the next one is spent once the
// current one cannot cover a check. It asks for what this instance spends
// of the key in a lease's life at the rate it spent the current one.
func (l *Leased) prefetch(e *leaseEntry, now int64) {
	c := &e.cur
	if e.taking || e.next.units > 0 || !c.lowWater(now) {
		return
	}
	if spent := c.leased - c.units; spent > 0 {
		e.size = min(ceilMulDiv(spent, e.plan.life, max(now-c.taken, 1)), l.opts.MaxUnits)
	}
	if l.take(e, now, e.want(now, l.opts.MaxUnits, l.share, l.opts.MaxAge.Microseconds())) {
		l.stats.prefetches.Add(1)
	}
}

// take starts taking a lease of up to n units for e in the background (e
// is locked) unless one is being taken or takes have failed lately: at
// most one take runs per key and limit, and no call waits for it. It
// takes less than n when e still holds units, so that e never holds more
// than LeaseOptions.MaxUnits. It reports whether it started one.
func (l *Leased) take(e *leaseEntry, now, n int64) bool {
	n = min(n, l.opts.MaxUnits-e.held())
	if e.taking || n < 1 || now < l.down.Load() || !l.refilling() {
		return false
	}
	e.taking = true
	l.stats.taking.Add(1)
	go l.refill(e, n)
	return true
}

// refilling reports whether a background take may start, and counts it
// for Close to wait for: not once Close has begun.
func (l *Leased) refilling() bool {
	l.refillMu.Lock()
	defer l.refillMu.Unlock()
	if l.closing {
		return false
	}
	l.refills.Add(1)
	return true
}

// refill takes n units of e's limit from the shared state (one apply.lua
// run, batched with the calls of the moment) and installs them as e's next
// lease, or as its current one if that can no longer be spent. A refusal
// or a failure leaves e without it.
func (l *Leased) refill(e *leaseEntry, n int64) {
	defer l.refills.Done()
	tk := []sluice.Check{{Key: e.key, Limit: e.plan.shared, Cost: n}}
	st := make([]sluice.Status, 1)
	l.stats.roundTrips.Add(1)
	now := l.clock()
	g, err := l.shared.applyAt(context.Background(), tk, st)
	after := l.clock()
	e.mu.Lock()
	e.taking = false
	switch {
	case err != nil:
	case !st[0].Allowed:
		e.hear(&st[0], now)
	case e.dead: // forgotten or replaced meanwhile: the units go back
		l.queue(tk[0], e.plan.mark(g, n, st[0].ResetAfter.Microseconds()))
	default:
		e.hear(&st[0], now)
		ls := l.newLease(e, now, g, n, n, &st[0])
		if e.cur.units < 1 || after >= e.cur.deadline {
			l.retireLease(e, &e.cur, after)
			e.cur = ls
		} else {
			e.next = ls
		}
	}
	e.mu.Unlock()
	l.stats.taking.Add(-1)
	if err != nil {
		l.down.Store(after + l.after)
	}
}
