package memory_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A store meets a new limit ID (and algorithm) at a cost that does not
// grow with the IDs it already knows. Limits whose ID follows a request
// (an Envoy descriptor's limit override names its window: one ID per
// window) may bring thousands of them, up to WithMaxLimits; each new one copied
// every ID known, under a mutex every new limit waits for, so that the
// 40,000th took milliseconds and 40,000 took a minute and a half.
func TestANewLimitIDCostsTheSameHoweverManyAreKnown(t *testing.T) {
	store, _, _ := newStore(t, memory.WithMaxKeys(64), memory.WithSweepInterval(0))
	ctx := context.Background()
	out := make([]sluice.Status, 1)
	next := 0
	add := func(n int) {
		for range n {
			next++
			l := sluice.FixedWindow(10, time.Duration(next)*time.Second)
			if err := store.Apply(ctx, []sluice.Check{{Key: "k", Limit: l.Named("override-" + l.Name()), Cost: 1}}, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	allocated := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		add(n)
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
	}
	add(100)
	few := allocated(500) // per new ID, 100 to 600 known
	add(3000)
	many := allocated(500) // per new ID, 3,600 to 4,100 known
	if many > 4*few+1024 {
		t.Errorf("bytes allocated per new limit ID: %d with 100 to 600 known, %d with 3,600 to 4,100: it grows with the IDs known", few, many)
	}
}
