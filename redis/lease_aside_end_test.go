package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// slowTake is the real shared state whose takes take time: while slow is
// set, the clocks pass d before Redis runs a take (a take whose round trip
// spans a window's end).
type slowTake struct {
	*Store
	slow   atomic.Bool
	clocks []*conformance.Clock
	d      time.Duration
}

func (b *slowTake) pass() {
	if b.slow.Load() {
		for _, c := range b.clocks {
			c.Advance(b.d)
		}
	}
}

func (b *slowTake) applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error {
	b.pass()
	return b.Store.applyAt(ctx, checks, out, ats)
}

func (b *slowTake) take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error) {
	b.pass()
	return b.Store.take(ctx, checks, want, out, got)
}

// A call with two checks, one covered by its lease and one that needs a
// take, sets the covered check's units aside while the take runs, and
// spends them once the take answers only if their lease still holds then:
// a lease that ended meanwhile (its window is over) was counted in the
// window before, which does not count a unit spent in the next. The call
// is then decided exactly, both checks together, as
// TestACallWaitingForItsKeyDoesNotSpendALeaseThatEndedMeanwhile decides
// one that waited for its key's lock. Otherwise the fleet admits Q + 1 in
// the new window.
func TestACallWaitingForAnotherKeysTakeDoesNotSpendALeaseThatEndedMeanwhile(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	const window = int64(time.Second / time.Microsecond)
	start := conformance.NewClock(conformance.DefaultStart).Micros()
	start -= start % window
	storeClock := conformance.NewClock(sluice.TimeFromMicros(start + window/2))
	leaseClock := conformance.NewClock(sluice.TimeFromMicros(start + window/2))
	store := New(client, WithTimeForTesting(storeClock.Now), WithTimeout(testTimeout))
	backend := &slowTake{Store: store, clocks: []*conformance.Clock{storeClock, leaseClock}, d: time.Duration(window/2) * time.Microsecond}
	leased := newLeased(store, backend, leaseClock.Now, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { leased.Close() })

	const q = 100
	x := sluice.Check{Key: "aside-x", Limit: sluice.FixedWindow(q, time.Second).Named("x"), Cost: 1}
	y := sluice.Check{Key: "aside-y", Limit: sluice.FixedWindow(1000, time.Second).Named("y"), Cost: 1}
	ctx := context.Background()
	out := make([]sluice.Status, 2)
	if err := leased.Apply(ctx, []sluice.Check{x}, out); err != nil || !out[0].Allowed {
		t.Fatalf("first call: %+v, %v", out[0], err)
	}
	if held := leased.Stats().Held; held < 1 {
		t.Fatalf("the first call leased nothing of x")
	}

	// x's lease covers the next call's x; y needs a take, whose round trip
	// ends after x's window (and its lease) ended.
	backend.slow.Store(true)
	if err := leased.Apply(ctx, []sluice.Check{x, y}, out); err != nil {
		t.Fatal(err)
	}
	backend.slow.Store(false)
	if leaseClock.Micros()/window == start/window {
		t.Fatalf("the take did not span the window's end")
	}
	admitted := 0
	if out[0].Allowed && out[1].Allowed {
		admitted++ // x admitted in the new window
	}
	// The new window, decided by Redis alone (another instance).
	other := New(client, WithTimeForTesting(storeClock.Now), WithTimeout(testTimeout))
	one := make([]sluice.Status, 1)
	for range 2 * q {
		if err := other.Apply(ctx, []sluice.Check{x}, one); err != nil {
			t.Fatal(err)
		}
		if one[0].Allowed {
			admitted++
		}
	}
	if admitted > q {
		t.Errorf("x admitted %d in one window of a fixed window of %d: a unit of the ended lease of the window before was admitted in it (stats %+v)",
			admitted, q, leased.Stats())
	}
}
