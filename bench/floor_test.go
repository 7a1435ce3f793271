package bench

import (
	"hash/maphash"
	"sync/atomic"
	"testing"
	"time"
)

// floorTable is the least state any keyed limiter must keep for NumKeys
// keys: per key an 8-byte fingerprint of the key and an 8-byte theoretical
// arrival time (GCRA's whole state), in an array indexed by the key's hash
// with room to spare (load factor ½), so that no probe ever goes further.
type floorTable struct {
	seed  maphash.Seed
	base  time.Time
	slots []floorSlot
}

type floorSlot struct {
	fp  atomic.Uint64
	tat atomic.Int64
}

func newFloorTable(keys []string) *floorTable {
	t := &floorTable{seed: maphash.MakeSeed(), base: time.Now(), slots: make([]floorSlot, 2*len(keys))}
	for _, k := range keys {
		h := maphash.String(t.seed, k) | 1
		for i := h % uint64(len(t.slots)); ; i = (i + 1) % uint64(len(t.slots)) {
			if t.slots[i].fp.Load() == 0 {
				t.slots[i].fp.Store(h)
				break
			}
		}
	}
	return t
}

// allow is GCRA for one unit at Rate per second, with nothing a real limiter
// also needs (eviction, expiry, validation, statuses, several limits): hash
// the key once, read the clock once, find the slot, one compare-and-swap.
func (t *floorTable) allow(key string) bool {
	h := maphash.String(t.seed, key) | 1
	now := int64(time.Since(t.base))
	const interval = int64(time.Second) / Rate
	const burst = interval * Rate
	i := h % uint64(len(t.slots))
	for t.slots[i].fp.Load() != h {
		i = (i + 1) % uint64(len(t.slots))
	}
	s := &t.slots[i]
	for {
		tat := s.tat.Load()
		next := max(tat, now) + interval
		if next-now > burst {
			return false
		}
		if s.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// benchFloor runs BenchmarkAllow's loop over the floor: the cost no keyed
// limiter can go below on this machine (one pass over the key's bytes, one
// clock reading, one state in a table of 65,536, one atomic update). A
// target below it cannot be reached by any implementation.
func benchFloor(b *testing.B) {
	t := newFloorTable(benchKeys)
	var gid atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := gid.Add(1)
		const mask = NumKeys - 1
		i := (id * 20011) & mask
		stride := (40503 + 2*id) & mask
		var no int64
		for pb.Next() {
			if !t.allow(benchKeys[i]) {
				no++
			}
			i = (i + stride) & mask
		}
		if no != 0 {
			b.Errorf("floor refused %d requests", no)
		}
	})
}

// TestFloorLimits checks that the floor is a real limiter: it admits a key's
// burst, then refuses, and a refusal spends nothing.
func TestFloorLimits(t *testing.T) {
	ft := newFloorTable([]string{"k", "other"})
	admitted := 0
	for range 2 * Rate {
		if ft.allow("k") {
			admitted++
		}
	}
	// A few units may refill while the loop runs.
	if admitted < Rate || admitted > Rate+Rate/10 {
		t.Fatalf("floor admitted %d of %d with burst %d", admitted, 2*Rate, Rate)
	}
	if !ft.allow("other") {
		t.Fatal("floor refused a fresh key")
	}
}
