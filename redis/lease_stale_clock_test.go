package redis

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A call that waits for a key's lock (another call spending, the sweep)
// while its lease ends must not spend from it by the time it read before
// waiting: a unit of the window that counted it would be admitted in the
// next, which does not count it.
func TestACallWaitingForItsKeyDoesNotSpendALeaseThatEndedMeanwhile(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	const window = int64(time.Second / time.Microsecond)
	start := conformance.NewClock(conformance.DefaultStart).Micros()
	start -= start % window
	storeClock := conformance.NewClock(sluice.TimeFromMicros(start + window/2))
	leaseClock := conformance.NewClock(sluice.TimeFromMicros(start + window/2))
	store := New(client, WithTimeForTesting(storeClock.Now), WithTimeout(testTimeout))
	leased := newLeased(store, store, leaseClock.Now, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { leased.Close() })

	limit := sluice.FixedWindow(100, time.Second).Named("fw")
	c := []sluice.Check{{Key: "waiting", Limit: limit, Cost: 1}}
	out := make([]sluice.Status, 1)
	if err := leased.Apply(context.Background(), c, out); err != nil || !out[0].Allowed {
		t.Fatalf("first call: %+v, %v", out, err)
	}
	spent := leased.Stats().Spent
	e := leased.entry(&c[0])
	e.mu.Lock()
	if e.cur.units < 1 {
		e.mu.Unlock()
		t.Fatalf("the first call leased nothing: %+v", e.cur)
	}
	done := make(chan error, 1)
	go func() { done <- leased.Apply(context.Background(), c, out) }()
	time.Sleep(300 * time.Millisecond) // the call reads its clock, then waits for the lock
	leaseClock.Advance(time.Second)    // the lease's window is over
	storeClock.Advance(time.Second)
	e.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := leased.Stats().Spent; got != spent {
		t.Errorf("the call spent %d units from a lease whose window ended while it waited", got-spent)
	}
}
