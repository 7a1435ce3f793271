package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A sweep gives back the memory of the states it forgets: after a flood of
// keys with sliding logs (kept beside the shards' arrays) has expired and
// been swept, the store holds about what it held before the flood, as it
// does for keys of the other algorithms.
func TestASweepGivesBackTheMemoryOfSlidingLogs(t *testing.T) {
	const keys = 100_000
	store, _, clock := newStore(t, memory.WithSweepInterval(0), memory.WithShards(16))
	ctx := context.Background()
	l := sluice.SlidingLog(5, time.Second)
	out := make([]sluice.Status, 1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for k := range keys {
		if err := store.Apply(ctx, []sluice.Check{{Key: fmt.Sprint("flood-", k), Limit: l, Cost: 1}}, out); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(3 * time.Second)
	if n := store.Sweep(); n != keys {
		t.Fatalf("the sweep forgot %d states, want %d", n, keys)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 1<<20 {
		t.Errorf("after %d sliding logs expired and were swept, the heap is %d bytes above what it was before them", keys, grown)
	}
	runtime.KeepAlive(store)
}
