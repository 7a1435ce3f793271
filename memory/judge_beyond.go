package memory

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// maxBeyondWindows bounds the windows of a limit's parameter sets met
// beyond those kept that the store tells apart (see registry.noteBeyond):
// a limit that meets such sets holds a table of them, about 900 bytes.
const maxBeyondWindows = 4

// beyond is what the parameter sets of a limit met beyond those the store
// keeps (see registry.roomFor) may have written, to rank its states by
// (see rankState). Its fields are empty while every set met is kept.
type beyond struct {
	// windows holds the first maxBeyondWindows windows of such sets (of
	// the window algorithms), each with the least quantity met under it;
	// it is replaced whole, under the registry's mutex, when a set of
	// another window comes while there is room for it, or a set of less
	// quantity than its window's.
	windows atomic.Pointer[beyondWindows]
	// quantity is 1 + the least quantity among the sets of windows met
	// beyond those windows holds (0: none).
	quantity atomic.Int64
	// refuse and full are 1 + the shortest time (µs) a state of one of
	// them owes, as a bucket's debt, beyond which it refuses a check of
	// cost 1, and whose debt is its whole burst (buckets and GCRA; 0:
	// none).
	refuse, full atomic.Int64
	// owes is the longest time (µs) a state of one of them may owe, as a
	// bucket's debt: its whole burst and, for a queue, its MaxWait (0:
	// none). A state that such a set refuses may refuse for that long
	// after the check that wrote it (see enforcing).
	owes atomic.Int64
}

// beyondWindows is the windows of a limit's sets met beyond those kept,
// in the order met.
type beyondWindows struct {
	n   int
	win [maxBeyondWindows]beyondWindow
}

// beyondWindow is one window (length, calendar period and offset) of a
// limit's sets met beyond those kept.
type beyondWindow struct {
	// peek is a check of cost 0 under a limit of the window's algorithm,
	// window, period and offset, and of quantity sluice.MaxQuantity. Every
	// set of a window reads a state's count alike, and has it back at full
	// quota at the same time: a fixed window's end, a log's last entry
	// plus the window, a sliding counter's counts faded (where a count
	// weighs at most the quantity, the most under this one). So a set of
	// the window may have written the states this one may have.
	peek sluice.Check
	// least is the least quantity met under the window.
	least int64
}

// find returns the entry of l's window, or nil.
func (bw *beyondWindows) find(l *sluice.Limit) *beyondWindow {
	if bw == nil {
		return nil
	}
	for i := range bw.n {
		if w := &bw.win[i]; sameWindow(&w.peek.Limit, l) {
			return w
		}
	}
	return nil
}

func (bw *beyondWindows) full() bool { return bw != nil && bw.n == maxBeyondWindows }

// sameWindow reports whether a and b, of one algorithm, have the same
// windows.
func sameWindow(a, b *sluice.Limit) bool {
	return a.Window() == b.Window() && a.Period() == b.Period() && a.Offset() == b.Offset()
}

// windowOf returns the limit of l's algorithm and windows, of quantity
// sluice.MaxQuantity (see beyondWindow.peek).
func windowOf(l *sluice.Limit) sluice.Limit {
	if p := l.Period(); p != 0 {
		return sluice.Calendar(sluice.MaxQuantity, p).WithOffset(l.Offset())
	}
	return sluice.NewLimit(l.Algorithm(), sluice.MaxQuantity, l.Window())
}

// noteBeyond notes l, a parameter set of lr that the store does not keep,
// before a check of it is decided: from then on a state of lr may be one
// l wrote, which the sets kept may take for their own, so rankState ranks
// it as the strictest set that may have written it would (see
// beyondWindow.judge and rankBeyond).
//
// A state of a window algorithm (fixed window, calendar, sliding counter
// and log, concurrency) is back at full quota when its window says,
// whatever the quantity: l may have written the states a set of its window
// may have, and no other. So the store notes, for each of the first
// maxBeyondWindows windows met beyond the sets kept (length, calendar
// period and offset), the least quantity met under it, and ranks the
// states that window may have written by that quantity. The sets of
// windows met beyond those are noted by their least quantity alone, which
// ranks every state of lr that some set judges used, whatever its window:
// a state such a set may have written is not told from the others.
//
// A bucket's state (token bucket, leaky bucket, GCRA) is a debt, a time
// that every rate reads alike and that ends at the same time whatever the
// rate: every bucket set of lr may have written every state of lr. So the
// store notes the shortest refill of those sets (see rankBeyond), and the
// longest debt any of them may write, for which a state it refuses may go
// on refusing after lr's latest enforcing check (see enforcing).
//
// It takes no lock and allocates nothing unless l's window is one lr has
// room for and does not hold, or l's quantity is less than its window's
// least: then it replaces lr's windows under the registry's mutex.
func (r *registry) noteBeyond(lr *limitRef, l *sluice.Limit) {
	if lr.kind == kindTB {
		lr.noteBeyondBucket(l)
		return
	}
	q := l.Quantity()
	bw := lr.beyond.windows.Load()
	if w := bw.find(l); w != nil && w.least <= q {
		return
	} else if w == nil && bw.full() {
		lowerTo(&lr.beyond.quantity, q+1)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	bw = lr.beyond.windows.Load()
	w := bw.find(l)
	switch {
	case w != nil && w.least <= q:
		return
	case w == nil && bw.full():
		lowerTo(&lr.beyond.quantity, q+1)
		return
	}
	next := new(beyondWindows)
	if bw != nil {
		*next = *bw
	}
	if w = next.find(l); w != nil {
		w.least = q
	} else {
		next.win[next.n] = beyondWindow{peek: sluice.Check{Limit: windowOf(l)}, least: q}
		next.n++
	}
	lr.beyond.windows.Store(next)
}

// noteBeyondBucket is noteBeyond for a bucket's l.
func (lr *limitRef) noteBeyondBucket(l *sluice.Limit) {
	w, b, q := uint64(l.Window()/time.Microsecond), uint64(l.Burst()), uint64(l.Quantity())
	// Full again in b·w/q µs, and refusing while it owes more than a
	// unit less than that; rounded down, the stricter way. A valid limit
	// refills within 2^52 µs: the quotients fit.
	hi, lo := bits.Mul64(b-1, w)
	refuse, _ := bits.Div64(hi, lo, q)
	hi, lo = bits.Mul64(b, w)
	full, _ := bits.Div64(hi, lo, q)
	raiseTo(&lr.beyond.owes, int64(full)+int64(l.MaxWait()/time.Microsecond))
	lowerTo(&lr.beyond.full, int64(full)+1) // before refuse: see rankBeyond
	lowerTo(&lr.beyond.refuse, int64(refuse)+1)
}

// lowerTo makes x v if x is 0 or above v.
func lowerTo(x *atomic.Int64, v int64) {
	for old := x.Load(); (old == 0 || v < old) && !x.CompareAndSwap(old, v); {
		old = x.Load()
	}
}

// raiseTo makes x v if x is below v.
func raiseTo(x *atomic.Int64, v int64) {
	for old := x.Load(); v > old && !x.CompareAndSwap(old, v); {
		old = x.Load()
	}
}

// judge ranks st, a state expiring at exp (at the second secs), at now as
// the least quantity met under w would; it reports false, as judge does,
// when no set of w's window can have written st.
func (w *beyondWindow) judge(st *sluice.State, now int64, secs uint64, exp int64) (rank, bool) {
	l := &w.peek.Limit
	_, p, err := l.Decide(*st, now, 0) // a peek: st unchanged
	if err != nil {
		return rank{}, false
	}
	if p.ResetAfter == 0 {
		return rank{class: classFull}, secs <= expSecs(now)
	}
	if expSecs(expiry(now, &p)) != secs {
		return rank{}, false
	}
	if l.Algorithm() == sluice.AlgorithmConcurrency {
		return rank{class: classRefusing, v: expiry(now, &p)}, true // see judge
	}
	return shareOf(l.Burst()-p.Remaining, w.least, exp), true
}

// shareOf ranks a window's state that holds used units, expiring at exp,
// under a quantity of least: refusing until it expires once it holds
// least units, else used by its share of them.
func shareOf(used, least, exp int64) rank {
	if used >= least {
		return rank{class: classRefusing, v: exp}
	}
	return rank{class: classUsed, v: used * shareOne / least}
}

// rankBeyond returns r, the rank of st, a state of lr expiring at exp
// with some of its capacity used, under c, a parameter set that may have
// written it; or, if later, the rank that the sets of lr met beyond those
// kept and not told apart by window (see registry.noteBeyond) may give
// it. A window's state holds a count that c reads as they do, and refuses
// under a set of quantity q once it holds q units; a bucket's state holds
// a debt, a time, and refuses under a set once it owes more than the set
// takes to refill all but one unit (a queue aside, which only admits
// more). A state that may so refuse ranks as refusing until it expires;
// another as the share used of the least quantity, or of the shortest
// whole refill, among those sets.
func (lr *limitRef) rankBeyond(r rank, c *sluice.Check, st *sluice.State, now, exp int64) rank {
	var v int64
	if lr.kind == kindTB {
		refuse := lr.beyond.refuse.Load() - 1
		if refuse < 0 {
			return r
		}
		full := lr.beyond.full.Load() - 1 // stored before refuse
		_, p, err := c.Limit.Decide(*st, now, 0)
		if err != nil {
			return r
		}
		owed := int64(p.ResetAfter / time.Microsecond)
		if owed > refuse {
			return rank{class: classRefusing, v: exp}
		}
		v = shareOne
		if owed < full {
			hi, lo := bits.Mul64(uint64(owed), shareOne)
			q, _ := bits.Div64(hi, lo, uint64(full))
			v = int64(q)
		}
	} else {
		least := lr.beyond.quantity.Load() - 1
		if least < 0 {
			return r
		}
		_, p, err := c.Limit.Decide(*st, now, 0)
		if err != nil {
			return r
		}
		b := shareOf(max(c.Limit.Burst()-p.Remaining, 0), least, exp)
		if b.class == classRefusing {
			return b
		}
		v = b.v
	}
	r.v = max(r.v, v)
	return r
}
