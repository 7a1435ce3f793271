package memory

import (
	"math/bits"
	"math/rand/v2"

	"github.com/sluice-dev/sluice"
)

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
//
// Deciders without the shard's mutex look up keys in the array the shard
// lists (see shard.lookup) and take entries (entry.acquire); the table's
// fields and everything else — inserting, removing, moving entries to a
// new array — belong to the holder of the mutex, which holds every entry it
// moves or reads (entry.hold), so that a decider never sees a key half
// moved: an array given up keeps its entries held forever.
type table struct {
	key   tableKey
	limit sluice.Limit
	slots []entry // replaced whole as the table grows or shrinks
	n     int
	logs  map[hash][]sluice.LogEntry // sliding log and concurrency only
}

func newTable(l sluice.Limit) *table {
	t := &table{key: tableKey{l.Name(), l.Algorithm()}, limit: l}
	if a := l.Algorithm(); a == sluice.AlgorithmSlidingLog || a == sluice.AlgorithmConcurrency {
		t.logs = map[hash][]sluice.LogEntry{}
	}
	return t
}

// entries returns the table's current array.
func (t *table) entries() []entry { return t.slots }

// home is where h's probe sequence starts in an array of n slots.
func home(h hash, n int) int {
	hi, _ := bits.Mul64(h.h2, uint64(n))
	return int(hi)
}

// find returns h's slot in es and true, or false and the empty slot where h
// would go. It looks at no more than len(es) slots: deciders without the
// mutex may meet an array full of keys moving under them, and then report
// h absent (-1, false), which sends them to the mutex.
func find(es []entry, h hash) (int, bool) {
	if len(es) == 0 {
		return -1, false
	}
	i := home(h, len(es))
	for range es {
		e := &es[i]
		h1 := e.h1.Load()
		if h1 == h.h1 && e.tag.Load()&^lockBits == h.h2 {
			return i, true
		}
		if h1 == 0 {
			return i, false
		}
		if i++; i == len(es) {
			i = 0
		}
	}
	return -1, false
}

// hold finds h and holds its entry for the shard's owner; ok is false for
// a key not held. taken is false when the owner already held the entry.
func (t *table) hold(h hash) (e *entry, taken, ok bool) {
	if t.n == 0 {
		return nil, false, false
	}
	es := t.entries()
	slot, ok := find(es, h)
	if !ok {
		return nil, false, false
	}
	e = &es[slot]
	return e, e.hold(), true
}

// readLog adds the sliding log of h, if the table keeps logs, to *st.
func (t *table) readLog(h hash, st *sluice.State) {
	if t.logs != nil {
		st.Log = t.logs[h]
	}
}

// store writes st, which expires at exp, into e, an entry of h the owner
// holds.
func (t *table) store(e *entry, h hash, st *sluice.State, exp int64) {
	e.write(st, exp)
	if t.logs != nil {
		if len(st.Log) == 0 {
			delete(t.logs, h)
		} else {
			t.logs[h] = st.Log
		}
	}
}

// insert adds h (not held) with state st. It reports whether the table
// moved to a new array (to grow) first.
func (t *table) insert(h hash, st *sluice.State, exp int64) (moved bool) {
	if es := t.entries(); (t.n+1)*maxLoadDen > len(es)*maxLoadNum {
		t.resize(max(minSlots, len(es)*growNum/growDen))
		moved = true
	}
	es := t.entries()
	slot, _ := find(es, h)
	e := &es[slot]
	e.tag.Store(h.h2 | lockShard)
	e.h1.Store(h.h1)
	t.n++
	t.store(e, h, st, exp)
	e.letGo()
	return moved
}

// remove empties slot, whose entry the owner holds, shifting later entries
// of the probe run back so that lookups never need tombstones.
func (t *table) remove(slot int) {
	es := t.entries()
	if t.logs != nil {
		delete(t.logs, hash{es[slot].h1.Load(), es[slot].tag.Load() &^ lockBits})
	}
	n := len(es)
	hole := slot
	for j := (slot + 1) % n; es[j].h1.Load() != 0; j = (j + 1) % n {
		src := &es[j]
		k := home(hash{h2: src.tag.Load() &^ lockBits}, n)
		// The entry at j may move to the hole unless its home lies
		// cyclically in (hole, j].
		if hole <= j && hole < k && k <= j || hole > j && (hole < k || k <= j) {
			continue
		}
		src.hold()
		dst := &es[hole] // held: the removed entry, or one moved on
		dst.t, dst.a, dst.b, dst.exp = src.t, src.a, src.b, src.exp
		dst.h1.Store(src.h1.Load())
		dst.tag.Store(src.tag.Load() &^ lockBits) // dst is src's key now, free
		hole = j
	}
	es[hole].h1.Store(0)
	es[hole].tag.Store(0)
	t.n--
}

// resize moves every entry to a new array of size slots. The old array's
// entries stay held, so deciders that still read it go to the mutex.
func (t *table) resize(slots int) {
	old := t.entries()
	fresh := make([]entry, slots)
	for i := range old {
		e := &old[i]
		if e.h1.Load() == 0 {
			continue
		}
		e.hold()
		h := hash{e.h1.Load(), e.tag.Load() &^ lockBits}
		slot, _ := find(fresh, h)
		d := &fresh[slot]
		d.t, d.a, d.b, d.exp = e.t, e.a, e.b, e.exp
		d.h1.Store(h.h1)
		d.tag.Store(h.h2)
	}
	t.slots = fresh
}

// compact gives memory back after a flood of keys has expired. It reports
// whether the table moved to a new array.
func (t *table) compact() bool {
	if n := len(t.entries()); n >= shrinkMinSlots && t.n*shrinkBelowOneIn < n {
		t.resize(max(minSlots, t.n*2))
		return true
	}
	return false
}

// sample returns up to evictionSample occupied slots from a random place.
func (t *table) sample(dst []int) []int {
	es := t.entries()
	if t.n == 0 {
		return dst
	}
	i := rand.IntN(len(es))
	for probes := 0; probes < evictionMaxProbes*evictionSample && len(dst) < cap(dst); probes++ {
		if es[i].h1.Load() != 0 {
			dst = append(dst, i)
		}
		if i++; i == len(es) {
			i = 0
		}
	}
	return dst
}
