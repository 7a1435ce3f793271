package client

import (
	"context"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
)

// A server counts a request when it arrives, some time after a gate
// admitted it, and answers after that: a gate counting each unit when it
// is sent lets the units sent at the end of a window and those sent at the
// start of the next arrive in one window of the server's. So a LimiterGate
// over window limits (sluice.FixedWindow, SlidingLog, SlidingCounter: q
// per w) also keeps, for each, a window of its own admissions (see window),
// in which a unit counts from its send until w after its release (the
// answer's arrival, as Transport releases): at most q such units in any
// span of w, which every fixed window, sliding log and sliding counter of
// q per w admits however late it counts them. It counts this process's
// admissions only: a gate shared by a fleet counts the others' when they
// are sent.

// sentWindows is the windows of a LimiterGate's window limits, and the
// units reserved or admitted and not yet released. Its methods are safe for
// concurrent use.
type sentWindows struct {
	mu       sync.Mutex
	wins     []*window
	inFlight int64
	changed  chan struct{} // closed and replaced when units leave inFlight
}

// newSentWindows returns the windows of limits' window limits, or nil
// when they have none.
func newSentWindows(limits []sluice.Limit) *sentWindows {
	var s sentWindows
	for _, l := range limits {
		switch l.Algorithm() {
		case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingLog, sluice.AlgorithmSlidingCounter:
		default:
			continue
		}
		if l.Shadow() || l.Quantity() <= 0 || l.Window() <= 0 {
			continue
		}
		s.wins = append(s.wins, newWindow(statedPolicy{name: l.Name(), q: l.Quantity(), w: l.Window()}, time.Time{}))
	}
	if len(s.wins) == 0 {
		return nil
	}
	s.changed = make(chan struct{})
	return &s
}

// exceeds returns an error wrapping ErrExceedsBurst when cost is above
// the q of a window: no wait ever admits it. A nil sentWindows admits any
// cost.
func (s *sentWindows) exceeds(cost int64) error {
	if s == nil {
		return nil
	}
	for _, w := range s.wins {
		if cost > w.q {
			return exceedsBurst(cost, w.name, w.q)
		}
	}
	return nil
}

// reserve blocks until every window admits cost more units, or ctx ends,
// and counts them in flight from then: a waiter that finds room takes it
// before any other looks. It returns the function that records their
// release (spent: once, its later calls do nothing) when the limiter
// admits them, and the one that takes them back uncounted (back) when it
// does not; the first called ends them, later calls do nothing. A nil sentWindows admits and records
// nothing.
func (s *sentWindows) reserve(ctx context.Context, cost int64, maxWait time.Duration) (spent, back func(), err error) {
	if s == nil {
		return func() {}, func() {}, nil
	}
	for {
		s.mu.Lock()
		now := time.Now()
		var wake time.Time
		ok := true
		for _, w := range s.wins {
			if admitted, at := w.admits(cost, s.inFlight, now); !admitted {
				ok, wake = false, later(wake, at)
			}
		}
		if ok {
			s.inFlight += cost
		}
		changed := s.changed
		s.mu.Unlock()
		if ok {
			spent, back := s.ends(cost)
			return spent, back, nil
		}
		if err := s.await(ctx, changed, now, wake, maxWait); err != nil {
			return nil, nil, err
		}
	}
}

// await blocks until changed is closed, wake (unless zero) passes, or ctx
// ends; a wake beyond maxWait, what is left of a Transport's
// Retry.MaxWait (see checkGateWait) or ctx's deadline is not awaited.
// Without a wake (units in flight, whose release no clock foresees), the
// wait ends when what is left of Retry.MaxWait has passed (see boundWait),
// with an error wrapping ErrWaitTooLong.
func (s *sentWindows) await(ctx context.Context, changed <-chan struct{}, now, wake time.Time, maxWait time.Duration) error {
	var fired <-chan time.Time
	wctx := ctx
	if !wake.IsZero() {
		if err := checkGateWait(ctx, wake.Sub(now), maxWait, "gate"); err != nil {
			return err
		}
		timer := time.NewTimer(wake.Sub(now))
		defer timer.Stop()
		fired = timer.C
	} else {
		var stop context.CancelFunc
		wctx, stop = boundWait(ctx)
		defer stop()
	}
	defer blocked(ctx, time.Now())
	select {
	case <-changed:
	case <-fired:
	case <-wctx.Done():
		return tooLong(ctx, "a window's room")
	}
	return nil
}

// ends returns the functions that end cost units' time in flight, the
// first of them called: spent counts them in the windows from then, back
// not at all.
func (s *sentWindows) ends(cost int64) (spent, back func()) {
	var once sync.Once
	end := func(sent bool) {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.inFlight -= cost
			if sent {
				now := time.Now()
				for _, w := range s.wins {
					w.add(cost, now)
				}
			}
			close(s.changed)
			s.changed = make(chan struct{})
		})
	}
	return func() { end(true) }, func() { end(false) }
}
