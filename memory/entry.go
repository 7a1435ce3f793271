package memory

import (
	"runtime"
	"sync/atomic"

	"github.com/sluice-dev/sluice"
)

// A key is known by a 125-bit hash of its bytes (two independent 64-bit
// maphash values with random seeds, three bits of the second spent on the
// entry's lock), not by the string itself: the table then holds no
// pointers, compares two integers instead of chasing a string, and
// inserting a key allocates nothing. Two keys share state only if both
// hashes collide — for a million keys a chance of about 10^-26.
type hash struct{ h1, h2 uint64 }

// entry is one key's state in a table: its hash and the fixed-size part of
// its State (a sliding log's entries live in table.logs). exp is when the
// state becomes equivalent to a fresh one (µs since sluice.Epoch): the sweep
// forgets it from then on.
//
// h1 == 0 marks an empty slot (a key's h1 has its low bit set). tag is the
// key's h2 (whose low bits are lockBits clear and bit 2 set, so no key's tag
// is ever the empty slot's 0) with the entry's lock state in the low bits.
//
// The lock lets a decision run without the shard's mutex: a decider takes
// the entry (lockDecide) with one compare-and-swap on the cache line it
// needs anyway, instead of first taking the shard's mutex, a line both
// cores fight over. The holder of the shard's mutex (the owner) takes
// entries with lockShard before it reads or moves them; a decider that
// finds an entry so held, or finds no entry, leaves the decision to the
// owner's path (see Store.applyOne). t, a, b and exp are read and written
// only by the entry's holder; h1 and tag change only while the owner holds
// the entry, or the slot is empty.
type entry struct {
	h1           atomic.Uint64
	tag          atomic.Uint64
	t, a, b, exp int64
}

// Lock states, in the low bits of entry.tag.
const (
	lockFree   = 0 // nobody holds the entry
	lockDecide = 1 // a decider without the shard's mutex holds it, for one decision
	lockShard  = 2 // the holder of the shard's mutex holds it
	lockBits   = 3
	tagMark    = 4 // set in every key's h2: a tag is never 0
)

// holds reports whether e is the slot of h (whatever its lock state).
func (e *entry) holds(h hash) bool {
	return e.h1.Load() == h.h1 && e.tag.Load()&^lockBits == h.h2
}

// acquire takes e, the slot of h, for one decision without the shard's
// mutex, waiting while another such decision holds it. It reports false,
// holding nothing, when e no longer holds h or the shard's owner holds it:
// the caller then decides under the mutex.
func (e *entry) acquire(h hash) bool {
	for spins := 0; ; spins++ {
		if e.tag.CompareAndSwap(h.h2|lockFree, h.h2|lockDecide) {
			// h1 changes only while the owner holds e: taken unheld, e
			// has not changed since it matched, unless it was replaced
			// by a key with the same h2.
			if e.h1.Load() == h.h1 {
				return true
			}
			e.tag.Store(h.h2 | lockFree)
			return false
		}
		if e.tag.Load() != h.h2|lockDecide {
			return false
		}
		backoff(spins)
	}
}

// release ends a decision's hold of e, the slot of h.
func (e *entry) release(h hash) { e.tag.Store(h.h2 | lockFree) }

// hold takes e for the shard's owner (the caller holds the shard's mutex),
// waiting for a decision in progress to end. It reports false when the
// owner already held e (a call that names one state twice), true when it
// took it now; only what it took is to be let go. e must not be empty.
func (e *entry) hold() bool {
	for spins := 0; ; spins++ {
		tag := e.tag.Load()
		switch tag & lockBits {
		case lockShard:
			return false
		case lockFree:
			if e.tag.CompareAndSwap(tag, tag|lockShard) {
				return true
			}
		}
		backoff(spins)
	}
}

// letGo ends the owner's hold of e.
func (e *entry) letGo() { e.tag.Store(e.tag.Load() &^ lockBits) }

// backoff waits a little before the spins-th retry of a held entry: a
// decision holds one for tens of nanoseconds, so spin at first, then let
// other goroutines run (the holder may have been descheduled).
func backoff(spins int) {
	if spins >= 16 {
		runtime.Gosched()
	}
}

// read copies e's fixed-size state into *st; the caller holds e.
func (e *entry) read(st *sluice.State) { st.T, st.A, st.B = e.t, e.a, e.b }

// write stores st, which expires at exp, into e; the caller holds e.
func (e *entry) write(st *sluice.State, exp int64) {
	e.t, e.a, e.b, e.exp = st.T, st.A, st.B, exp
}
