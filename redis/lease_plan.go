package redis

import (
	"math/bits"
	"strconv"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// leasePlan is how one limit is leased (see Leased and the package
// documentation, Leased quota, for why each bound holds).
type leasePlan struct {
	// shared is the limit the shared state decides every check of the
	// limit by, leased or not: the limit itself for a window, a bucket's
	// limit with its burst less hold for a bucket.
	shared sluice.Limit
	// window is the limit's window in µs when its leases end with the
	// window they were taken in (fixed window, sliding counter); 0 for a
	// bucket.
	window int64
	// life is the longest a lease lives, µs: for a bucket the L whose
	// refill, hold units, the shared burst holds back.
	life int64
	// hold is the units a bucket's shared burst holds back (0 for a window).
	hold int64
	// rq and rw are the bucket's ticks per µs and per unit (see
	// internal/algo.Params).
	rq, rw int64
	// period and off are a calendar window's (see sluice.Calendar): its
	// windows are then calendar periods, not window µs from the epoch.
	period algo.Period
	off    int64
}

// planLease returns the plan of limit l with leases living at most maxAge,
// or false when l's checks are decided per request: a sliding log (whose
// every admission is a timestamp: a unit spent later than its entry would
// count in windows the log never checked), a concurrency limit (a unit is
// given back by the work that holds it, not by time), a leaky-bucket queue
// (each admission is told its own delay), a shadow limit (it never
// refuses, so there is nothing to save), and a bucket whose burst or rate
// leaves no hold-back worth a lease. A bucket's life and hold-back are
// leasehold.Of's, the one formula that configuration judges
// costs by too.
func planLease(l sluice.Limit, maxAge time.Duration) (leasePlan, bool) {
	if l.Err() != nil || l.Shadow() {
		return leasePlan{}, false
	}
	age := max(int64(maxAge/time.Microsecond), 1)
	q, w := l.Quantity(), int64(l.Window()/time.Microsecond)
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter:
		return leasePlan{shared: l, window: w, life: min(age, w),
			period: algo.Period(l.Period()), off: int64(l.Offset() / time.Microsecond)}, true
	}
	shared, life, ok := leasehold.Of(l, maxAge)
	if !ok {
		return leasePlan{}, false
	}
	g := gcd(q, w)
	return leasePlan{shared: shared, life: int64(life / time.Microsecond), hold: l.Burst() - shared.Burst(),
		rq: q / g, rw: w / g}, true
}

// lifeAt returns how long, in µs from g (the shared state's time of the
// take), a lease taken at g may be spent: to the end of g's window, at
// most the plan's life.
func (p *leasePlan) lifeAt(g int64) int64 {
	if p.window == 0 {
		return p.life
	}
	_, end := p.windowOf(g)
	return min(end-g, p.life)
}

// windowOf returns the start and end of the window that holds g: aligned
// to sluice.Epoch, or the calendar period's.
func (p *leasePlan) windowOf(g int64) (start, end int64) {
	if p.period != 0 {
		return algo.CalendarWindow(p.period, p.off, g)
	}
	start = g - g%p.window
	if g%p.window < 0 {
		start -= p.window
	}
	return start, start + p.window
}

// mark returns the undo mark (see lease.lua) of a take at g: a window's
// start, or a bucket's "g:0". A bucket's undo then gives back a lease's
// units less all that refilled since g, as if every tick refilled since
// went to the lease: what the bucket missed before the take (an undo's
// m0, which lets a reservation undone soon after keep its refill) may
// have counted an earlier lease given back since, whose units the bucket
// then no longer misses. With m0 = 0 a give-back never returns a unit
// the bucket refilled, whatever else was given back before it.
func (p *leasePlan) mark(g int64) string {
	if p.window != 0 {
		start, _ := p.windowOf(g)
		return strconv.FormatInt(start, 10)
	}
	return strconv.FormatInt(g, 10) + ":0"
}

// ceilMulDiv returns ⌈a·b/c⌉ for positive a, b, c, saturating at 2^62.
func ceilMulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 1 << 62
	}
	quo, rem := bits.Div64(hi, lo, uint64(c))
	if rem != 0 {
		quo++
	}
	return int64(min(quo, 1<<62))
}
