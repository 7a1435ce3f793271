package bench

import (
	"fmt"
	"runtime"
	"time"
)

// HeapPeriod is the limit's period in the heap measurement: long enough that
// no peer forgets, sweeps or rotates out a key while n keys are inserted.
const HeapPeriod = time.Hour

// HeapPerKey inserts n distinct keys ("key-0" … "key-<n-1>", one request
// each) into a fresh instance of p sized for max(2n, 2^20) keys (so a
// sluice store evicts none: its bound is per shard), and returns the growth
// of the live heap (runtime.MemStats.HeapAlloc after two collections, before
// and after) divided by n: the heap bytes each tracked key costs, the
// instance's fixed overhead included. Run it in a fresh process for a clean
// baseline.
func HeapPerKey(p Peer, n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)

	inst := p.New(Config{MaxKeys: max(2*n, 1<<20), Period: HeapPeriod})
	allow := inst.Worker()
	for i := range n {
		if !allow(fmt.Sprintf("key-%d", i)) {
			panic(fmt.Sprintf("%s refused fresh key %d", p.Name, i))
		}
	}

	if h, ok := inst.(Holder); ok {
		if keys, evicted := h.Held(); keys != n || evicted != 0 {
			panic(fmt.Sprintf("%s holds %d of %d keys, %d evicted", p.Name, keys, n, evicted))
		}
	}

	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(allow)
	runtime.KeepAlive(inst)
	inst.Close()
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
}
