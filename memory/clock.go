package memory

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// idleTicks is how many ticks in a row without a decision stop a clock's
// ticker: an idle store wakes nothing. The next decision reads the exact
// time and starts the ticker again.
const idleTicks = 64

// clock is a store's time source, in µs since sluice.Epoch.
//
// With a resolution (the default clock), decisions read a time that a
// background ticker writes every resolution, as nginx and HAProxy decide
// on a time cached once per event-loop turn: one atomic load instead of a
// read of the system clock. That time lags the exact one by up to a
// resolution, plus however late the ticker runs. A call refused at it is
// decided again at the exact time (see refused), so every refusal is the
// exact clock's; admissions may be decided up to the lag early, for limits
// that tolerate it (see tolerates and WithClockResolution).
type clock struct {
	read   func() int64  // the exact time
	base   time.Time     // time.Now at New, with its monotonic reading
	baseUS int64         // base in µs since sluice.Epoch
	res    time.Duration // ticker period; 0: every read is exact

	// cached is the ticker's last time t (µs since sluice.Epoch) as t << 1,
	// with bit 0 set once a decision has read it (so the ticker can tell an
	// idle store); 0 while no ticker runs (a t of 0, 2020-01-01T00:00:00Z
	// unread, reads as no ticker: the exact time is read instead).
	cached atomic.Int64
	closed atomic.Bool
	stop   <-chan struct{} // closed by Store.Close
	// mu orders starting a ticker with close, so that wait, after close,
	// waits for every ticker started.
	mu      sync.Mutex
	tickers sync.WaitGroup

	// What the ticker saw of its own lateness (see Stats).
	lateTicks atomic.Int64
	maxGap    atomic.Int64 // µs

	// latest is the latest time an injected clock has read (µs), which
	// may step back (see notBefore); math.MinInt64 until it reads one, and
	// for the default clock, which never steps back.
	latest atomic.Int64
}

// newClock returns the clock of WithClock(injected) when injected is not
// nil, else the monotonic clock read as WithClockResolution(res) says.
func newClock(injected func() time.Time, res time.Duration, stop <-chan struct{}) *clock {
	c := &clock{base: time.Now(), stop: stop}
	c.baseUS = sluice.MicrosSinceEpoch(c.base)
	c.latest.Store(math.MinInt64) // none read: every time is later, before sluice.Epoch too
	switch {
	case injected != nil:
		c.read = func() int64 { return c.mark(sluice.MicrosSinceEpoch(injected())) }
	default:
		c.read = c.monotonic
		if res > 0 {
			c.res = max(res, minResolution)
		}
	}
	return c
}

// monotonic is the wall time at base advanced by the monotonic clock.
func (c *clock) monotonic() int64 { return c.baseUS + int64(time.Since(c.base)/time.Microsecond) }

// minResolution is the shortest ticker period: a shorter one would cost a
// core more than the clock reads it saves.
const minResolution = 100 * time.Microsecond

// lagShare is the share of a limit's burst, 1/lagShare, that the clock's
// lag may add (see tolerates).
const lagShare = 256

// tolerates reports whether l may be decided at the lagging time: whether
// l refills at most one unit or 1/lagShare of its burst, whichever is
// more, in one resolution (res·Q/W ≤ max(1, ⌊B/lagShare⌋), compared in 128
// bits). A faster limit (100,000/s with a burst of 100: 100 units a
// millisecond, its whole burst) is decided at the exact time, so that a
// resolution of lag never adds more than a unit or 1/lagShare of a burst.
//
// Only a limit that refills at a steady rate is so bounded. The fixed
// window, the sliding counter and the sliding log give capacity back at
// once (a window's start, an entry's expiry): a charge counted at a
// lagging time in the window before the exact time's, or stamped up to the
// lag early, frees up to a whole quantity more in a span the limit
// promises Q for. They are always decided at the exact time. A concurrency
// limit tolerates the lag by its rate like the buckets: its leases may
// expire up to the lag early (see WithClockResolution).
func (c *clock) tolerates(l *sluice.Limit) bool {
	switch l.Algorithm() {
	case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter, sluice.AlgorithmSlidingLog:
		return false
	}
	lagHi, lagLo := bits.Mul64(uint64(c.res), uint64(l.Quantity()))
	okHi, okLo := bits.Mul64(uint64(l.Window()), uint64(max(1, l.Burst()/lagShare)))
	return lagHi < okHi || lagHi == okHi && lagLo <= okLo
}

// nowFor returns the time to decide checks at, and whether it may lag:
// the lagging time when every check's limit tolerates it, else the exact
// time.
func (c *clock) nowFor(checks []sluice.Check) (int64, bool) {
	lag := c.res != 0
	for i := 0; lag && i < len(checks); i++ {
		lag = c.tolerates(&checks[i].Limit)
	}
	return c.nowIf(lag)
}

// nowIf returns the time to decide a call at, and whether it may lag: the
// lagging time if lag (every limit of the call tolerates it), else the
// exact time.
func (c *clock) nowIf(lag bool) (int64, bool) {
	if c.res == 0 || !lag {
		return c.exact(), false
	}
	return c.now(), true
}

// exact reads the time.
func (c *clock) exact() int64 { return c.read() }

// mark returns t, an injected clock's reading, having made latest the
// larger of t and what it was.
func (c *clock) mark(t int64) int64 {
	for {
		m := c.latest.Load()
		if t <= m || c.latest.CompareAndSwap(m, t) {
			return t
		}
	}
}

// notBefore reads the time, or returns the latest time the clock has read
// when that is later (an injected clock that stepped back): a time no
// earlier than any the store has decided at, and so than any receipt it
// has given (see Reset). Decisions never read it: they take the time as
// it comes, and the algorithms a time behind a state's as no time passed.
// The default clock never steps back (the ticker's times are earlier
// exact reads), so it keeps no mark and notBefore is exact.
func (c *clock) notBefore() int64 {
	t := c.exact()
	return max(t, c.latest.Load())
}

// now returns the ticker's last time, or, while no ticker runs, the exact
// time (starting the ticker unless the store is closed). A time it returns
// may be behind an exact read made before it, by up to the lag; the
// algorithms take a time behind a state's as no time passed.
func (c *clock) now() int64 {
	if v := c.cached.Load(); v&1 != 0 { // read before: the common case
		return v >> 1
	}
	return c.nowSlow()
}

// nowSlow is now when the ticker's time is unread or no ticker runs.
func (c *clock) nowSlow() int64 {
	if v := c.cached.Load(); v != 0 {
		c.cached.CompareAndSwap(v, v|1) // read: the store is not idle
		return v >> 1
	}
	t := c.exact()
	if c.res > 0 && t != 0 && !c.closed.Load() && c.cached.CompareAndSwap(0, c.encode(t)) {
		c.start()
	}
	return t
}

// start runs tick, unless the clock closed since the caller looked: it
// then clears cached, which the caller set, so reads stay exact.
func (c *clock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		c.cached.Store(0)
		return
	}
	c.tickers.Go(c.tick)
}

// encode is t as cached holds it, unread (the shift cannot overflow:
// sluice.MicrosSinceEpoch saturates near ±2^53).
func (c *clock) encode(t int64) int64 { return t << 1 }

// tick writes the exact time into cached every res until the store closes
// or has been idle for idleTicks ticks in a row; it then clears cached and
// returns.
func (c *clock) tick() {
	t := time.NewTicker(c.res)
	defer t.Stop()
	idle := 0
	for {
		select {
		case <-c.stop:
			c.cached.Store(0)
			return
		case <-t.C:
		}
		v := c.cached.Load()
		if v&1 != 0 {
			idle = 0
		} else if idle++; idle >= idleTicks && c.cached.CompareAndSwap(v, 0) {
			return
		}
		now := c.exact()
		c.observe(v>>1, now)
		c.cached.Store(c.encode(now))
	}
}

// observe records a tick at now after one at prev (µs): the gap is the
// longest any decision between them lagged the exact time.
func (c *clock) observe(prev, now int64) {
	gap := now - prev
	if gap > 2*int64(c.res/time.Microsecond) {
		c.lateTicks.Add(1)
	}
	if gap > c.maxGap.Load() {
		c.maxGap.Store(gap) // one writer: the ticker
	}
}

// close stops the ticker for good: every later read is exact. The ticker
// returns once stop is closed; wait waits for it.
func (c *clock) close() {
	c.mu.Lock()
	c.closed.Store(true)
	c.mu.Unlock()
}

// wait returns when no ticker runs; call it after close and stop.
func (c *clock) wait() { c.tickers.Wait() }
