package memory

import (
	"math/bits"
	"math/rand/v2"

	"github.com/sluice-dev/sluice"
)

// Growth: a table holds at most half as many keys as it has slots and grows
// by a quarter, so at any size it is between two fifths and half full: 64 to
// 80 bytes of entries a key. At most half full, nine keys in ten are in their
// home slot or the next one (at four fifths full, three in four), and a
// decision spends little of its time probing (BENCHMARKS.md).
const (
	minSlots          = 8
	maxLoadNum        = 1
	maxLoadDen        = 2
	growNum, growDen  = 5, 4
	shrinkBelowOneIn  = 8
	shrinkMinSlots    = 1024
	evictionSample    = 8
	evictionRounds    = 8
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
	key    tableKey
	judges *judges // the parameter sets to rank states by (see rank)
	kind   stateKind
	arr    array // replaced whole as the table grows or shrinks
	n      int
	logs   map[hash][]sluice.LogEntry // kindLog only
}

// stateKind says which words of a sluice.State a table's algorithm uses,
// and so where an entry keeps them.
type stateKind uint8

const (
	kindTA  stateKind = iota // T and A in the entry (fixed window, token and leaky bucket)
	kindTB                   // T and B in the entry (GCRA)
	kindTAB                  // T and A in the entry, B beside it (sliding counter)
	kindLog                  // the log in table.logs (sliding log, concurrency)
)

func kindOf(a sluice.Algorithm) stateKind {
	switch a {
	case sluice.AlgorithmGCRA:
		return kindTB
	case sluice.AlgorithmSlidingCounter:
		return kindTAB
	case sluice.AlgorithmSlidingLog, sluice.AlgorithmConcurrency:
		return kindLog
	}
	return kindTA
}

// array is a table's slots: the entries and, for kindTAB, each slot's B.
type array struct {
	es []entry
	bs []int64
}

func makeArray(kind stateKind, slots int) array {
	a := array{es: make([]entry, slots)}
	if kind == kindTAB {
		a.bs = make([]int64, slots)
	}
	return a
}

// read copies the state of slot i into *st; the caller holds the entry.
// A log is not read (see table.readLog).
func (a *array) read(kind stateKind, i int, st *sluice.State) {
	e := &a.es[i]
	switch kind {
	case kindTA:
		st.T, st.A = e.t, e.a
	case kindTB:
		st.T, st.B = e.t, e.a
	case kindTAB:
		st.T, st.A, st.B = e.t, e.a, a.bs[i]
	}
}

// write stores st into slot i; the caller holds the entry. A log is not
// written (see table.store).
func (a *array) write(kind stateKind, i int, st *sluice.State) {
	e := &a.es[i]
	switch kind {
	case kindTA:
		e.t, e.a = st.T, st.A
	case kindTB:
		e.t, e.a = st.T, st.B
	case kindTAB:
		e.t, e.a, a.bs[i] = st.T, st.A, st.B
	}
}

// copyState copies the state words of slot i of src to slot j of a; the
// caller holds both entries (or owns a, not yet listed).
func (a *array) copyState(j int, src *array, i int) {
	a.es[j].t, a.es[j].a = src.es[i].t, src.es[i].a
	if a.bs != nil {
		a.bs[j] = src.bs[i]
	}
}

// newTable returns a table for l's name and algorithm whose states are
// ranked by j (nil: by l's parameters alone).
func newTable(l sluice.Limit, j *judges) *table {
	if j == nil {
		j = newJudges(&l)
	}
	t := &table{key: tableKey{l.ID(), l.Algorithm()}, judges: j, kind: kindOf(l.Algorithm())}
	if t.kind == kindLog {
		t.logs = map[hash][]sluice.LogEntry{}
	}
	return t
}

// entries returns the table's current entries.
func (t *table) entries() []entry { return t.arr.es }

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
		if h1 == h.h1 && h.names(e.tag.Load()) {
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
func (t *table) hold(h hash) (slot int, taken, ok bool) {
	if t.n == 0 {
		return -1, false, false
	}
	slot, ok = find(t.arr.es, h)
	if !ok {
		return -1, false, false
	}
	return slot, t.arr.es[slot].hold(), true
}

// load reads the state of slot, which the owner holds, of h into *st.
func (t *table) load(slot int, h hash, st *sluice.State) {
	t.arr.read(t.kind, slot, st)
	if t.logs != nil {
		st.Log = t.logs[h]
	}
}

// store writes st, which expires at exp, into slot, an entry of h the owner
// holds.
func (t *table) store(slot int, h hash, st *sluice.State, exp int64) {
	t.arr.write(t.kind, slot, st)
	t.arr.es[slot].setExpiry(exp)
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
	if es := t.arr.es; (t.n+1)*maxLoadDen > len(es)*maxLoadNum {
		t.resize(max(minSlots, len(es)*growNum/growDen))
		moved = true
	}
	slot, _ := find(t.arr.es, h)
	e := &t.arr.es[slot]
	e.tag.Store(h.h2 | lockShard)
	e.h1.Store(h.h1)
	t.n++
	t.store(slot, h, st, exp)
	e.letGo()
	return moved
}

// keyOf returns the hash of e, which is not empty.
func keyOf(e *entry) hash { return hash{e.h1.Load(), e.tag.Load() & keyMask} }

// remove empties slot, whose entry the owner holds, shifting later entries
// of the probe run back so that lookups never need tombstones.
func (t *table) remove(slot int) {
	es := t.arr.es
	if t.logs != nil {
		delete(t.logs, keyOf(&es[slot]))
	}
	n := len(es)
	hole := slot
	for j := (slot + 1) % n; es[j].h1.Load() != 0; j = (j + 1) % n {
		src := &es[j]
		k := home(keyOf(src), n)
		// The entry at j may move to the hole unless its home lies
		// cyclically in (hole, j].
		if hole <= j && hole < k && k <= j || hole > j && (hole < k || k <= j) {
			continue
		}
		src.hold()
		dst := &es[hole] // held: the removed entry, or one moved on
		t.arr.copyState(hole, &t.arr, j)
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
	old := t.arr
	fresh := makeArray(t.kind, slots)
	for i := range old.es {
		e := &old.es[i]
		if e.h1.Load() == 0 {
			continue
		}
		e.hold()
		slot, _ := find(fresh.es, keyOf(e))
		fresh.copyState(slot, &old, i)
		fresh.es[slot].h1.Store(e.h1.Load())
		fresh.es[slot].tag.Store(e.tag.Load() &^ lockBits)
	}
	t.arr = fresh
}

// compact gives memory back after a flood of keys has expired. It reports
// whether the table moved to a new array.
func (t *table) compact() bool {
	if n := len(t.arr.es); n >= shrinkMinSlots && t.n*shrinkBelowOneIn < n {
		// As full as just after a growth: the next inserts do not grow it.
		t.resize(max(minSlots, t.n*maxLoadDen*growNum/(maxLoadNum*growDen)))
		return true
	}
	return false
}

// sample returns up to evictionSample occupied slots from a random place.
func (t *table) sample(dst []int) []int {
	es := t.arr.es
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
