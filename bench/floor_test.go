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
	seed            maphash.Seed
	clock           *tickClock
	interval, burst int64 // ns: Rate per second with a burst of Rate
	slots           []floorSlot
}

type floorSlot struct {
	fp  atomic.Uint64
	tat atomic.Int64
}

func newFloorTable(keys []string) *floorTable {
	t := &floorTable{seed: maphash.MakeSeed(), clock: newTickClock(), slots: make([]floorSlot, 2*len(keys))}
	t.interval, t.burst = rateInterval()
	placeKeys(t.seed, keys, t.slots, func(s *floorSlot) *atomic.Uint64 { return &s.fp })
	return t
}

// rateInterval returns the emission interval and burst (ns) of Rate per
// second with a burst of Rate, the limit every peer enforces.
func rateInterval() (interval, burst int64) {
	interval = int64(time.Second) / Rate
	return interval, interval * Rate
}

// neverRefuse makes a floor's limit a billion a second with a burst of a
// billion: it admits every request of a benchmark (see BenchmarkInCache).
func neverRefuse(interval, burst *int64) { *interval, *burst = 1, int64(time.Second) }

// placeKeys writes the fingerprint of every key (its maphash under seed, low
// bit set) into the first free slot from its hash on, by linear probing; fp
// returns a slot's fingerprint word (0: free).
func placeKeys[S any](seed maphash.Seed, keys []string, slots []S, fp func(*S) *atomic.Uint64) {
	n := uint64(len(slots))
	for _, k := range keys {
		h := maphash.String(seed, k) | 1
		i := h % n
		for fp(&slots[i]).Load() != 0 {
			i = (i + 1) % n
		}
		fp(&slots[i]).Store(h)
	}
}

// allow is GCRA for one unit at Rate per second, with nothing a real limiter
// also needs (eviction, expiry, validation, statuses, several limits): hash
// the key once, read the time a ticker keeps, find the slot, one
// compare-and-swap.
func (t *floorTable) allow(key string) bool {
	h := maphash.String(t.seed, key) | 1
	now := t.clock.now()
	i := h % uint64(len(t.slots))
	for t.slots[i].fp.Load() != h {
		i = (i + 1) % uint64(len(t.slots))
	}
	s := &t.slots[i]
	for {
		tat := s.tat.Load()
		next := max(tat, now) + t.interval
		if next-now > t.burst {
			return false
		}
		if s.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// benchFloor runs BenchmarkAllow's loop over the floor: the cost no keyed
// limiter can go below on this machine (one pass over the key's bytes, one
// atomic load of the time, one state in a table of 65,536, one atomic
// update). A target below it cannot be reached by any implementation.
func benchFloor(b *testing.B) {
	t := newFloorTable(benchKeys)
	defer t.clock.close()
	runFloor(b, t.allow)
}

// tickClock is the cheapest time a limiter can read per decision: one
// atomic load of nanoseconds since its start, which a goroutine refreshes
// every millisecond (as sluice's memory store does by default).
type tickClock struct {
	base time.Time
	ns   atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func newTickClock() *tickClock {
	c := &tickClock{base: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.ns.Store(int64(time.Since(c.base)))
			}
		}
	}()
	return c
}

// now returns the nanoseconds since the clock's start as of its last tick.
func (c *tickClock) now() int64 { return c.ns.Load() }

// close stops the ticker.
func (c *tickClock) close() {
	close(c.stop)
	<-c.done
}

// runFloor is BenchmarkAllow's loop over a floor's allow.
func runFloor(b *testing.B, allow func(string) bool) {
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
			if !allow(benchKeys[i]) {
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
	keys := []string{"k", "other"}
	floor, locked := newFloorTable(keys), newLockedFloorTable(keys)
	defer floor.clock.close()
	defer locked.clock.close()
	for name, allow := range map[string]func(string) bool{
		"floor":        floor.allow,
		"floor-locked": locked.allow,
	} {
		admitted := 0
		for range 2 * Rate {
			if allow("k") {
				admitted++
			}
		}
		// A few units may refill while the loop runs.
		if admitted < Rate || admitted > Rate+Rate/10 {
			t.Fatalf("%s admitted %d of %d with burst %d", name, admitted, 2*Rate, Rate)
		}
		if !allow("other") {
			t.Fatalf("%s refused a fresh key", name)
		}
	}
}

// lockedFloorTable is the floor with what a store that spends several
// limits in one atomic call must add: a state of two words (GCRA's arrival
// time and its fraction, or a bucket's time and level), which no single
// compare-and-swap covers, behind a lock in the entry's own cache line,
// taken with a compare-and-swap and let go with a store. 32-byte slots, so
// no slot straddles two cache lines.
type lockedFloorTable struct {
	seed            maphash.Seed
	clock           *tickClock
	interval, burst int64 // ns, as floorTable's
	slots           []lockedFloorSlot
}

type lockedFloorSlot struct {
	fp, lock  atomic.Uint64
	tat, frac int64
}

func newLockedFloorTable(keys []string) *lockedFloorTable {
	t := &lockedFloorTable{seed: maphash.MakeSeed(), clock: newTickClock(), slots: make([]lockedFloorSlot, 2*len(keys))}
	t.interval, t.burst = rateInterval()
	placeKeys(t.seed, keys, t.slots, func(s *lockedFloorSlot) *atomic.Uint64 { return &s.fp })
	return t
}

func (t *lockedFloorTable) allow(key string) bool {
	h := maphash.String(t.seed, key) | 1
	now := t.clock.now()
	i := h % uint64(len(t.slots))
	for t.slots[i].fp.Load() != h {
		i = (i + 1) % uint64(len(t.slots))
	}
	s := &t.slots[i]
	for !s.lock.CompareAndSwap(0, 1) {
	}
	next := max(s.tat, now) + t.interval
	ok := next-now <= t.burst
	if ok {
		s.tat, s.frac = next, 0
	}
	s.lock.Store(0)
	return ok
}

// benchLockedFloor runs BenchmarkAllow's loop over lockedFloorTable.
func benchLockedFloor(b *testing.B) {
	t := newLockedFloorTable(benchKeys)
	defer t.clock.close()
	runFloor(b, t.allow)
}
