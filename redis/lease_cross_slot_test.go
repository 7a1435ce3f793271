package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A take whose keys lie in several Cluster slots is decided slot by slot,
// at slightly different times. When a window ends between two of them,
// the keys decided first counted their leases in the window that ended: a
// lease never outlives the window that counted it, so none of those units
// is spent in the next window, where the shared state no longer counts
// them.
func TestLeasedTakeAcrossSlotsEndsWithTheEarliestWindow(t *testing.T) {
	t.Parallel()
	client := redistest.Cluster(t).Client(t)
	const window = int64(time.Second / time.Microsecond)
	start := conformance.NewClock(conformance.DefaultStart).Micros()
	start -= start % window
	end := start + window // the end of the window the take starts in

	// The store's clock: the first slot runs 10 µs before the window ends,
	// the second 10 µs after, and every later run at end+100.
	var mu sync.Mutex
	runs := []int64{end - 10, end + 10}
	storeNow := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := end + 100
		if len(runs) > 0 {
			now, runs = runs[0], runs[1:]
		}
		return sluice.TimeFromMicros(now)
	}
	leaseClock := conformance.NewClock(sluice.TimeFromMicros(end - 20))
	store := New(client, WithTimeForTesting(storeNow), WithTimeout(testTimeout))
	leased := newLeased(store, store, leaseClock.Now, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { leased.Close() })

	subj := subjectsBySlot(2, "take-")
	limit := sluice.FixedWindow(100, time.Second).Named("fw")
	first := []sluice.Check{{Key: subj[0], Limit: limit, Cost: 1}, {Key: subj[1], Limit: limit, Cost: 1}}
	out := make([]sluice.Status, 2)
	if err := leased.Apply(context.Background(), first, out); err != nil || !out[0].Allowed || !out[1].Allowed {
		t.Fatalf("first call: %+v, %v; want both admitted", out, err)
	}
	if s := leased.Stats(); s.Leases != 2 {
		t.Fatalf("the first call took %d leases, want 2 (one per key)", s.Leases)
	}

	// In the next window the first slot's key gets its 100 units, and no
	// more.
	leaseClock.Advance(120 * time.Microsecond)
	admitted := 0
	one := []sluice.Check{{Key: subj[0], Limit: limit, Cost: 1}}
	for range 300 {
		if err := leased.Apply(context.Background(), one, out[:1]); err != nil {
			t.Fatal(err)
		}
		if !out[0].Allowed {
			break
		}
		admitted++
	}
	if admitted > 100 {
		t.Errorf("admitted %d units of a limit of 100 in the window after the take: the take's lease outlived the window that counted it", admitted)
	}
}
