// Package storetest holds what the tests of sluice.Store implementations
// share: a clock that moves only when told to, a Store that fails on demand,
// and checks of the Store contract. It is for tests only.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// Clock is a clock that moves only when told to. It is safe for concurrent
// use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at 2026-11-30 12:00 UTC.
func NewClock() *Clock {
	return &Clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock d forward (back, for d < 0).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ErrRedisDown is the error of a store that cannot reach its server, as a
// Redis store reports it.
var ErrRedisDown = fmt.Errorf("%w: dial tcp 10.0.0.7:6379: connection refused", sluice.ErrStoreUnavailable)

// Flaky is a Store that fails on demand and otherwise asks Next (and
// answers nothing without one). It counts the calls that reach it and those
// it failed. Its exported fields are set before the calls they are for run,
// or between them; Fail may be called at any time.
type Flaky struct {
	Next sluice.Store
	// Hang makes a call wait until its context is done and fail with the
	// context's error.
	Hang bool
	// During, when set, is called during each call, before it answers.
	During func()
	// Clock, when set, is advanced by Cost during each call: how long a
	// call takes on it.
	Clock *Clock
	Cost  time.Duration

	// Calls counts the calls that reached the store, Failures those that
	// failed.
	Calls, Failures atomic.Int64

	mu  sync.Mutex
	err error
}

// Fail makes every call from now on fail with err (nil: answer again).
func (s *Flaky) Fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// Err returns the error the store fails with now (nil when it answers).
func (s *Flaky) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Apply implements sluice.Store.
func (s *Flaky) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.Calls.Add(1)
	err := s.Err()
	if s.During != nil {
		s.During()
	}
	if s.Hang {
		<-ctx.Done()
		s.Failures.Add(1)
		return fmt.Errorf("flaky store: %w", ctx.Err())
	}
	if err == nil && s.Next != nil {
		err = s.Next.Apply(ctx, checks, out)
	}
	if s.Clock != nil {
		s.Clock.Advance(s.Cost)
	}
	if err != nil {
		s.Failures.Add(1)
	}
	return err
}

// Decided returns the state and status of a call of sluice.Limit.Decide
// whose limit and cost the test built valid: Decided(l.Decide(s, now, cost)).
// It panics on Decide's error, which is then the test's own mistake.
func Decided(s sluice.State, st sluice.Status, err error) (sluice.State, sluice.Status) {
	if err != nil {
		panic(fmt.Sprintf("storetest.Decided: %v", err))
	}
	return s, st
}

// Mismatched calls s's Apply, and its Release and Refund where s has them,
// with one status, lease or charge fewer than checks, and returns a line
// for each that did not return an error wrapping sluice.ErrInvalidCheck (a
// panic is the test's failure too).
func Mismatched(ctx context.Context, s sluice.Store, checks []sluice.Check) []string {
	var bad []string
	expect := func(what string, err error) {
		if !errors.Is(err, sluice.ErrInvalidCheck) {
			bad = append(bad, fmt.Sprintf("%s with one element fewer than %d checks: %v, want ErrInvalidCheck", what, len(checks), err))
		}
	}
	n := len(checks) - 1
	expect("Apply", s.Apply(ctx, checks, make([]sluice.Status, n)))
	if r, ok := s.(sluice.Releaser); ok {
		expect("Release", r.Release(ctx, checks, make([]int64, n)))
	}
	if r, ok := s.(sluice.Refunder); ok {
		expect("Refund", r.Refund(ctx, checks, make([]int64, n)))
	}
	return bad
}
