package redis

import (
	"context"

	"github.com/sluice-dev/sluice"
)

// minPrefetch is the fewest units a take at low water asks for. Such a
// take is a script run of its own, a few commands in Redis, where a check
// decided exactly rides in a run with others: a smaller lease would cost
// Redis more than the exact checks it saves. (A take a call waits for
// carries that call's check, and is worth any size.)
const minPrefetch = 8

// prefetch starts taking e's next lease in the background (e is locked; a
// check has just spent from its current lease at now) when the current
// one is at low water (lease.lowWater), no take for e runs, none is held
// in reserve and the shared remainder leaves a share of at least
// minPrefetch units to lease. Calls keep spending the current lease
// meanwhile; the next one is spent once the current one cannot cover a
// check. Its size is what this instance spends of the key in a lease's
// life at the rate it spent the current one, capped so that e never holds
// more than LeaseOptions.MaxUnits, nor more than the shared remainder's
// share.
func (l *Leased) prefetch(e *leaseEntry, now int64) {
	c := &e.cur
	if e.taking != nil || e.next.units > 0 || !c.lowWater(now) || now < l.down.Load() {
		return
	}
	spent := c.leased - c.units
	if spent < 1 {
		return
	}
	e.size = min(ceilMulDiv(spent, e.plan.life, max(now-c.taken, 1)), l.opts.MaxUnits)
	n := min(e.want(now, l.opts.MaxUnits, l.share, l.opts.MaxAge.Microseconds()), l.opts.MaxUnits-c.units)
	if n < minPrefetch || l.direct != nil && !l.direct([]sluice.Check{{Key: e.key, Limit: e.limit}}) || !l.refilling() {
		return
	}
	ch := make(chan struct{})
	e.taking = ch
	l.stats.taking.Add(1)
	l.stats.prefetches.Add(1)
	go l.refill(e, n, e.scarce(l.opts.MaxUnits, l.share), ch)
}

// refilling reports whether a take may start, a background one or a
// call's, and counts it for Close to wait for (done with l.refills.Done):
// not once Close has begun, for a lease installed after Close's last
// give-back would never go back.
func (l *Leased) refilling() bool {
	l.refillMu.Lock()
	defer l.refillMu.Unlock()
	if l.closing {
		return false
	}
	l.refills.Add(1)
	return true
}

// refill takes n units of e's limit from the shared state (up to n, as
// many as it has left, when scarce: see Leased.take) and installs them as
// e's next lease (as its current one if that can no longer be spent), then
// closes ch, which e.taking is. A refusal, none left, or a failure leaves
// e without it: the next call that its lease cannot cover decides as
// without one.
func (l *Leased) refill(e *leaseEntry, n int64, scarce bool, ch chan struct{}) {
	defer l.refills.Done()
	tk := []sluice.Check{{Key: e.key, Limit: e.plan.shared}}
	st, got, gs := make([]sluice.Status, 1), make([]int64, 1), make([]int64, 1)
	now, ep := l.clock(), l.epoch.Load()
	_, err := l.take(context.Background(), tk, []int64{n}, st, got, gs, scarce)
	g := gs[0]
	after := l.clock()
	e.mu.Lock()
	e.taking = nil
	n = got[0]
	tk[0].Cost = n
	switch {
	case err != nil:
	case !st[0].Allowed || n == 0:
		e.hear(&st[0], now)
	case e.dead: // forgotten or replaced meanwhile: the units go back
		l.queue(tk[0], e.plan.mark(g), g, ep)
	case ep != l.epoch.Load(): // taken from a shared state lost since (see drop)
		e.hear(&st[0], now)
		l.stats.lost.Add(n)
	case g <= e.resetAt: // taken from a state reset since (see resetBefore)
		l.stats.lost.Add(n)
	default:
		e.hear(&st[0], now)
		next := l.newLease(e, now, g, n, ep)
		if e.cur.units < 1 || after >= e.cur.deadline {
			l.retireLease(e, &e.cur, after)
			e.cur = next
		} else {
			e.next = next
		}
	}
	e.mu.Unlock()
	l.stats.taking.Add(-1)
	close(ch)
	if err != nil {
		l.stats.failures.Add(1)
		l.down.Store(after + l.after)
	}
}
