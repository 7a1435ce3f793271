package memory

import (
	"strings"

	"github.com/sluice-dev/sluice"
)

// chunk is the number of cells per slab chunk: the slab grows a chunk at a
// time, so a growing table never holds a doubled copy of its cells.
const chunkBits = 9
const chunk = 1 << chunkBits

// cell is the fixed-size part of a State (its Log lives in table.logs).
//
// exp is when the state becomes equivalent to a fresh one (µs since
// sluice.Epoch): the sweep forgets it from then on.
type cell struct{ t, a, b, exp int64 }

// table holds the states of one limit name and algorithm within one shard.
// Limits that share both (the "per-minute" GCRA of two plans) share a table:
// a key that changes plan keeps its state, which Decide clamps to the new
// parameters.
type table struct {
	limit sluice.Limit
	index map[string]uint32 // key → slot
	slab  [][]cell          // slot → cell, in chunks
	logs  [][]sluice.LogEntry
	free  []uint32 // slots released by deletes
	next  uint32   // first never-used slot
	peak  int      // largest len(index) since the last rebuild
}

func newTable(l sluice.Limit) *table {
	return &table{limit: l, index: make(map[string]uint32)}
}

func (t *table) cell(slot uint32) *cell {
	return &t.slab[slot>>chunkBits][slot&(chunk-1)]
}

// load returns key's state and slot; ok is false for a key not held.
func (t *table) load(key string) (st sluice.State, slot uint32, ok bool) {
	slot, ok = t.index[key]
	if !ok {
		return st, 0, false
	}
	c := t.cell(slot)
	st = sluice.State{T: c.t, A: c.a, B: c.b}
	if t.logs != nil {
		st.Log = t.logs[slot]
	}
	return st, slot, true
}

// store writes st, which expires at exp, into slot.
func (t *table) store(slot uint32, st sluice.State, exp int64) {
	*t.cell(slot) = cell{st.T, st.A, st.B, exp}
	if t.logs != nil {
		t.logs[slot] = st.Log
	}
}

// insert adds key (copied, so the caller's memory is not retained) with
// state st and returns its slot.
func (t *table) insert(key string, st sluice.State, exp int64) uint32 {
	return t.insertOwned(strings.Clone(key), st, exp)
}

// insertOwned is insert for a key string the table may keep as it is.
func (t *table) insertOwned(key string, st sluice.State, exp int64) uint32 {
	var slot uint32
	if n := len(t.free); n > 0 {
		slot, t.free = t.free[n-1], t.free[:n-1]
	} else {
		slot = t.next
		t.next++
		if int(slot>>chunkBits) == len(t.slab) {
			t.slab = append(t.slab, make([]cell, chunk))
		}
		if a := t.limit.Algorithm(); a == sluice.AlgorithmSlidingLog || a == sluice.AlgorithmConcurrency {
			t.logs = append(t.logs, nil)
		}
	}
	t.index[key] = slot
	t.store(slot, st, exp)
	t.peak = max(t.peak, len(t.index))
	return slot
}

// remove forgets key.
func (t *table) remove(key string, slot uint32) {
	delete(t.index, key)
	*t.cell(slot) = cell{}
	if t.logs != nil {
		t.logs[slot] = nil
	}
	t.free = append(t.free, slot)
}

// rebuilt returns a compact copy of t: Go maps never shrink, so after a
// flood of keys has expired the store rebuilds the table to give memory back.
func (t *table) rebuilt() *table {
	n := newTable(t.limit)
	n.index = make(map[string]uint32, len(t.index))
	for key, slot := range t.index {
		st, _, _ := t.load(key)
		n.insertOwned(key, st, t.cell(slot).exp)
	}
	return n
}
