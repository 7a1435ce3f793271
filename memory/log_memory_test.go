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
// keep the memory of the long one. 64 keys each admit 4,096 at once, then,
// a window later, one more: they hold 64 entries, not 64 × 4,096.
func TestASlidingLogThatShrinksGivesItsMemoryBack(t *testing.T) {
	const keys, burst = 64, 4096
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	store, _, clock := newStore(t, memory.WithSweepInterval(0))
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
	// One entry a key, and the store's own arrays: far below the 4 MB of
	// the long logs.
	if grown > 1<<20 {
		t.Errorf("the heap grew by %d bytes for %d logs of one entry each (%d bytes a key)", grown, keys, grown/keys)
	}
	runtime.KeepAlive(store)
}
