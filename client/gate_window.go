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
// units admitted and not yet released. Its methods are safe for
// concurrent use.
type sentWindows struct {
	mu       sync.Mutex
	wins     []*window
	inFlight int64
	changed  chan struct{} // closed and replaced when units are released
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

// wait blocks until every window admits cost more units, or ctx ends. A
// nil sentWindows admits anything.
func (s *sentWindows) wait(ctx context.Context, cost int64, maxWait time.Duration) error {
	if s == nil {
		return nil
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
		changed := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		var fired <-chan time.Time
		if !wake.IsZero() {
			if err := checkWait(ctx, wake.Sub(now), maxWait, "gate"); err != nil {
				return err
			}
			timer := time.NewTimer(wake.Sub(now))
			defer timer.Stop()
			fired = timer.C
		}
		select {
		case <-changed:
		case <-fired:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// spend records cost units admitted, and returns the function that
// records their release (once; its later calls do nothing). A nil
// sentWindows records nothing.
func (s *sentWindows) spend(cost int64) func() {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	s.inFlight += cost
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			now := time.Now()
			s.inFlight -= cost
			for _, w := range s.wins {
				w.add(cost, now)
			}
			close(s.changed)
			s.changed = make(chan struct{})
		})
	}
}
