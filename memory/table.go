package memory

import (
	"math/bits"
	"math/rand/v2"

	"github.com/sluice-dev/sluice"
)

// A key is known by a 128-bit hash of its bytes (two independent 64-bit
// maphash values with random seeds), not by the string itself: the table
// then holds no pointers, compares two integers instead of chasing a string,
// and inserting a key allocates nothing. Two keys share state only if both
// 64-bit hashes collide — for a million keys a chance of about 10^-27.
type hash struct{ h1, h2 uint64 }

// entry is one key's state in a table: its hash and the fixed-size part of
// its State (a sliding log's entries live in table.logs). exp is when the
// state becomes equivalent to a fresh one (µs since sluice.Epoch): the sweep
// forgets it from then on. h1 == 0 marks an empty slot (h1 always has its
// low bit set).
type entry struct {
	hash
	t, a, b, exp int64
}

// Growth: a table holds at most 4/5 of its slots and grows by half, so at
// any size it is between about half and four fifths full.
const (
	minSlots          = 8
	maxLoadNum        = 4
	maxLoadDen        = 5
	growNum, growDen  = 3, 2
	shrinkBelowOneIn  = 8
	shrinkMinSlots    = 1024
	evictionSample    = 8
	evictionMaxProbes = 64
)

// table holds the states of one limit name and algorithm within one shard,
// in an open-addressing array with linear probing. Limits that share both
// (the "per-minute" GCRA of two plans) share a table: a key that changes plan
// keeps its state, which Decide clamps to the new parameters.
type table struct {
	key     tableKey
	limit   sluice.Limit
	entries []entry
	n       int
	logs    map[hash][]sluice.LogEntry // sliding log and concurrency only
}

func newTable(l sluice.Limit) *table {
	t := &table{key: tableKey{l.Name(), l.Algorithm()}, limit: l}
	if a := l.Algorithm(); a == sluice.AlgorithmSlidingLog || a == sluice.AlgorithmConcurrency {
		t.logs = map[hash][]sluice.LogEntry{}
	}
	return t
}

// home is where h's probe sequence starts.
func (t *table) home(h hash) int {
	hi, _ := bits.Mul64(h.h2, uint64(len(t.entries)))
	return int(hi)
}

// find returns h's slot and true, or the empty slot where h would go and
// false. The table must have a free slot.
func (t *table) find(h hash) (int, bool) {
	i := t.home(h)
	for {
		e := &t.entries[i]
		if e.hash == h {
			return i, true
		}
		if e.h1 == 0 {
			return i, false
		}
		if i++; i == len(t.entries) {
			i = 0
		}
	}
}

// load returns h's state and slot; ok is false for a key not held.
func (t *table) load(h hash) (st sluice.State, slot int, ok bool) {
	slot, ok = t.loadInto(h, &st)
	return st, slot, ok
}

// loadInto writes h's state to *st (the zero State for a key not held, st
// being zero) and returns its slot; ok is false for a key not held.
func (t *table) loadInto(h hash, st *sluice.State) (slot int, ok bool) {
	if t.n == 0 {
		return -1, false
	}
	slot, ok = t.find(h)
	if !ok {
		return -1, false
	}
	e := &t.entries[slot]
	st.T, st.A, st.B = e.t, e.a, e.b
	if t.logs != nil {
		st.Log = t.logs[h]
	}
	return slot, true
}

// store writes st, which expires at exp, into slot.
func (t *table) store(slot int, st sluice.State, exp int64) {
	e := &t.entries[slot]
	e.t, e.a, e.b, e.exp = st.T, st.A, st.B, exp
	if t.logs != nil {
		if len(st.Log) == 0 {
			delete(t.logs, e.hash)
		} else {
			t.logs[e.hash] = st.Log
		}
	}
}

// insert adds h (not held) with state st.
func (t *table) insert(h hash, st sluice.State, exp int64) {
	if (t.n+1)*maxLoadDen > len(t.entries)*maxLoadNum {
		t.resize(max(minSlots, len(t.entries)*growNum/growDen))
	}
	slot, _ := t.find(h)
	t.entries[slot].hash = h
	t.n++
	t.store(slot, st, exp)
}

// remove empties slot, shifting later entries of the probe run back so that
// lookups never need tombstones.
func (t *table) remove(slot int) {
	if t.logs != nil {
		delete(t.logs, t.entries[slot].hash)
	}
	n := len(t.entries)
	hole := slot
	for j := (slot + 1) % n; t.entries[j].h1 != 0; j = (j + 1) % n {
		k := t.home(t.entries[j].hash)
		// The entry at j may move to the hole unless its home lies
		// cyclically in (hole, j].
		if hole <= j && hole < k && k <= j || hole > j && (hole < k || k <= j) {
			continue
		}
		t.entries[hole] = t.entries[j]
		hole = j
	}
	t.entries[hole] = entry{}
	t.n--
}

// resize moves every entry to a new array of size slots.
func (t *table) resize(slots int) {
	old := t.entries
	t.entries = make([]entry, slots)
	for i := range old {
		if old[i].h1 != 0 {
			slot, _ := t.find(old[i].hash)
			t.entries[slot] = old[i]
		}
	}
}

// compact gives memory back after a flood of keys has expired.
func (t *table) compact() {
	if len(t.entries) >= shrinkMinSlots && t.n*shrinkBelowOneIn < len(t.entries) {
		t.resize(max(minSlots, t.n*2))
	}
}

// sample returns up to evictionSample occupied slots from a random place.
func (t *table) sample(dst []int) []int {
	if t.n == 0 {
		return dst
	}
	i := rand.IntN(len(t.entries))
	for probes := 0; probes < evictionMaxProbes*evictionSample && len(dst) < cap(dst); probes++ {
		if t.entries[i].h1 != 0 {
			dst = append(dst, i)
		}
		if i++; i == len(t.entries) {
			i = 0
		}
	}
	return dst
}
