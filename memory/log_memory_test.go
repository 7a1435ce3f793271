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

// A sliding log holds 16 bytes per admission still in its window (see
// WithMaxKeys): a key whose log was once long and is now short must not
// keep the memory of the long one. 32 keys each admit 2,048 at once, then,
// a window later, one more: they hold 32 entries, not 32 × 2,048.
func TestASlidingLogThatShrinksGivesItsMemoryBack(t *testing.T) {
	const keys, burst = 32, 2048
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	store, _, clock := newStore(t, memory.WithSweepInterval(0), memory.WithShards(16))
	ctx := context.Background()
	l := sluice.SlidingLog(burst, time.Minute)
	out := make([]sluice.Status, 1)
	admit := func(key string) {
		if err := store.Apply(ctx, []sluice.Check{{Key: key, Limit: l, Cost: 1}}, out); err != nil || !out[0].Allowed {
			t.Fatalf("%s: %v, allowed %v", key, err, out[0].Allowed)
		}
	}
	for k := range keys {
		for range burst {
			admit(fmt.Sprint("key-", k))
		}
	}
	clock.Advance(time.Minute + time.Second)
	for k := range keys {
		admit(fmt.Sprint("key-", k))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if held := store.Stats().Keys; held != keys {
		t.Fatalf("the store holds %d states, want %d", held, keys)
	}
	// One entry a key, and the store's own arrays: far below the 1 MB of
	// the long logs.
	if grown > 256<<10 {
		t.Errorf("the heap grew by %d bytes for %d logs of one entry each (%d bytes a key)", grown, keys, grown/keys)
	}
	runtime.KeepAlive(store)
}
