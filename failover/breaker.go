package failover

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// ErrCircuitOpen is the reason a Store gives (to Options.OnFallback) for a
// decision it made without asking its primary store because the circuit
// breaker was open. It wraps sluice.ErrStoreUnavailable.
var ErrCircuitOpen = fmt.Errorf("%w: circuit breaker open", sluice.ErrStoreUnavailable)

// Default breaker settings. With them a primary that is back is asked again
// at most DefaultBreakerOpenFor after the breaker last saw it fail.
const (
	// DefaultBreakerFailures is how many consecutive failures open the
	// breaker.
	DefaultBreakerFailures = 5
	// DefaultBreakerOpenFor is how long the breaker stays open before it
	// lets one probe call through.
	DefaultBreakerOpenFor = 500 * time.Millisecond
)

// BreakerState is where a Store's circuit breaker is in its cycle. The zero
// BreakerState is BreakerClosed.
type BreakerState uint8

const (
	// BreakerClosed lets every call through and counts consecutive failures.
	BreakerClosed BreakerState = iota
	// BreakerOpen lets no call through until OpenFor has passed.
	BreakerOpen
	// BreakerHalfOpen has let one probe call through and waits for its
	// outcome: success closes the breaker, failure opens it again.
	BreakerHalfOpen
)

// String returns "closed", "open" or "half-open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("breaker-state(%d)", uint8(s))
}

// BreakerOptions configures a Store's circuit breaker. The zero value means
// the defaults.
type BreakerOptions struct {
	// Failures is how many consecutive failed calls open the breaker;
	// DefaultBreakerFailures (5) when ≤ 0. A success resets the count.
	Failures int
	// OpenFor is how long the breaker stays open before it lets a probe call
	// through; DefaultBreakerOpenFor (500 ms) when ≤ 0. It is also how long
	// a probe may stay unanswered before another one is let through.
	OpenFor time.Duration
	// Clock returns the current time; time.Now when nil. The breaker reads it
	// only while open or half-open, never on the path of a healthy call; the
	// Store reads it too for the ages of what it remembers, for the return
	// period and, with Options.Node, for how long ago a node was last
	// called (see Stats.Nodes). The breaker's open period, the return
	// period and a node's age are measured as elapsed time: without a Clock
	// on the monotonic clock, and with one as the sum of its forward moves,
	// so that a clock set back lengthens none (see timeline).
	Clock func() time.Time
	// OnStateChange, when not nil, is called on every transition, in order,
	// with the breaker's lock held: it must be quick and must not call the
	// Store's Apply (Stats is safe). It is the place for a log line:
	// transitions are rare, calls are not.
	OnStateChange func(from, to BreakerState)
}

// A ticket is the permission Allow hands out for one call. Report the call's
// outcome with Done, or abandon the ticket. Tickets from
// before the breaker's last transition are stale and ignored, so a slow call
// that started while the breaker was closed cannot close it again after it
// opened.
// The zero ticket permits nothing.
type ticket struct {
	word uint64 // the breaker's state word when the ticket was issued
	ok   bool
}

// A breaker is a circuit breaker: it keeps calls away from a dependency that
// keeps failing, and lets them back once a probe succeeds.
//
// Closed, it lets every call through; Failures consecutive failures open it.
// Open, it lets no call through. The first Allow at least OpenFor after it
// opened makes it half-open and lets exactly one probe call through; other
// calls are refused until the probe's outcome is known. A successful probe
// closes the breaker; a failed one opens it again for another OpenFor.
//
// A healthy call costs two atomic loads: the clock and the lock are touched
// only while the breaker is open, half-open, or counting failures. The zero
// breaker is closed and uses the default settings. A breaker is safe for
// concurrent use; do not copy it after first use.
type breaker struct {
	opts BreakerOptions

	// word is gen<<2 | state; gen grows on every transition and on every
	// new probe, and makes older tickets stale.
	word   atomic.Uint64
	streak atomic.Int64 // consecutive failures while closed; written under mu
	opens  atomic.Int64

	mu       sync.Mutex
	tl       timeline
	since    time.Duration // on tl: when the breaker opened, or when the probe left
	probeOut bool          // half-open: a probe is out and unanswered
}

// State returns the breaker's state as of its last transition. An open
// breaker whose OpenFor has passed still reports BreakerOpen until the next
// Allow turns it half-open.
func (b *breaker) State() BreakerState { return BreakerState(b.word.Load() & 3) }

// Opens returns how many times the breaker has opened, counting every
// re-opening after a failed probe.
func (b *breaker) Opens() int64 { return b.opens.Load() }

// OpenFor returns the configured open duration, with the default applied.
func (b *breaker) OpenFor() time.Duration {
	if b.opts.OpenFor > 0 {
		return b.opts.OpenFor
	}
	return DefaultBreakerOpenFor
}

func (b *breaker) failures() int64 {
	if b.opts.Failures > 0 {
		return int64(b.opts.Failures)
	}
	return DefaultBreakerFailures
}

// now reads the breaker's timeline. b.mu is held.
func (b *breaker) now() time.Duration { return b.tl.read(b.opts.Clock) }

// Allow reports whether a call may go to the dependency now. When ok is true
// the caller must end the call with Done(ticket, success) or abandon(ticket);
// a half-open breaker that never hears back lets another probe through after
// OpenFor. When ok is false the call must not be made.
func (b *breaker) Allow() (t ticket, ok bool) {
	if w := b.word.Load(); BreakerState(w&3) == BreakerClosed {
		return ticket{w, true}, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.word.Load()
	switch BreakerState(w & 3) {
	case BreakerClosed:
		return ticket{w, true}, true
	case BreakerOpen:
		now := b.now()
		if now-b.since < b.OpenFor() {
			return ticket{}, false
		}
		w = b.transition(BreakerHalfOpen)
		b.since, b.probeOut = now, true
		return ticket{w, true}, true
	default: // half-open
		now := b.now()
		if b.probeOut && now-b.since < b.OpenFor() {
			return ticket{}, false
		}
		// No probe out (the last was released) or it is lost: send a new
		// one, and make the old ticket stale.
		w = b.advance(w)
		b.since, b.probeOut = now, true
		return ticket{w, true}, true
	}
}

// Done reports the outcome of the call that t permitted. A failure while
// closed counts towards opening the breaker, a success resets the count; a
// probe's success closes the breaker and its failure opens it again. Done
// ignores stale tickets and the zero ticket.
func (b *breaker) Done(t ticket, success bool) {
	if !t.ok || success && t.word == b.word.Load() && BreakerState(t.word&3) == BreakerClosed && b.streak.Load() == 0 {
		return // nothing permitted, or the healthy path: nothing to change
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.word.Load()
	if t.word != w {
		return // stale
	}
	switch BreakerState(w & 3) {
	case BreakerClosed:
		if success {
			b.streak.Store(0)
			return
		}
		if b.streak.Add(1) >= b.failures() {
			b.open()
		}
	case BreakerHalfOpen:
		if success {
			b.transition(BreakerClosed)
		} else {
			b.open()
		}
	}
}

// abandon gives back the ticket of a call that ended without saying anything
// about the dependency, for example because its caller gave up. An abandoned
// probe lets the next Allow send another one at once.
func (b *breaker) abandon(t ticket) {
	if !t.ok || BreakerState(t.word&3) != BreakerHalfOpen {
		return // closed-state tickets carry no obligation
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.word == b.word.Load() {
		b.probeOut = false
	}
}

// dueIn reports whether the breaker is open or half-open and, if so, how
// long until Allow lets a probe through: 0 when it would now. It changes
// nothing.
func (b *breaker) dueIn() (time.Duration, bool) {
	if BreakerState(b.word.Load()&3) == BreakerClosed {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch BreakerState(b.word.Load() & 3) {
	case BreakerClosed:
		return 0, false
	case BreakerHalfOpen:
		if !b.probeOut {
			return 0, true
		}
	}
	return max(b.OpenFor()-(b.now()-b.since), 0), true
}

// refusing reports whether Allow would refuse a call now: open, and
// OpenFor not yet passed since it opened. It changes nothing.
func (b *breaker) refusing() bool {
	if BreakerState(b.word.Load()&3) != BreakerOpen {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return BreakerState(b.word.Load()&3) == BreakerOpen && b.now()-b.since < b.OpenFor()
}

// open moves to BreakerOpen now. b.mu is held.
func (b *breaker) open() {
	b.transition(BreakerOpen)
	b.since, b.probeOut = b.now(), false
	b.opens.Add(1)
}

// transition moves to state to with a new generation and returns the new
// word. b.mu is held.
func (b *breaker) transition(to BreakerState) uint64 {
	old := b.word.Load()
	w := (old>>2+1)<<2 | uint64(to)
	b.streak.Store(0)
	b.word.Store(w)
	if f := b.opts.OnStateChange; f != nil {
		f(BreakerState(old&3), to)
	}
	return w
}

// advance starts a new generation in the same state. b.mu is held.
func (b *breaker) advance(old uint64) uint64 {
	w := (old>>2+1)<<2 | old&3
	b.word.Store(w)
	return w
}
