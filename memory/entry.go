package memory

import (
	"runtime"
	"sync/atomic"
)

// A key is known by a 93-bit hash of its bytes (64 bits from one seeded
// lane of keyHasher and 29 from the other, independently seeded), not by
// the string
// itself: the table then holds no pointers, compares two integers instead of
// chasing a string, and inserting a key allocates nothing. Two keys share
// state only if both hashes collide — for a million keys held at once a
// chance of about 10^-16.
//
// h2 keeps its top 29 bits (idMask) and tagMark, so that it is the part of
// an entry's tag that names the key.
type hash struct{ h1, h2 uint64 }

// entry is one key's slot in a table: 32 bytes, so that no entry straddles
// two cache lines. It holds the key's hash, when its state becomes
// equivalent to a fresh one (the sweep forgets it from then on), the lock
// below, and the first two words of its State (see stateKind; a third word
// and sliding logs live beside the array).
//
// h1 == 0 marks an empty slot (a key's h1 has its low bit set). tag packs,
// from the top: 29 bits of the key's h2, the expiry in whole seconds since
// sluice.Epoch rounded up (expShift; saturated: never), tagMark (so that a
// key's tag is never the empty slot's 0) and the lock state (lockBits).
//
// The lock lets a decision run without the shard's mutex: a decider takes
// the entry (lockDecide) with one compare-and-swap on the cache line it
// needs anyway, instead of first taking the shard's mutex, a line both
// cores fight over. The holder of the shard's mutex (the owner) takes
// entries with lockShard before it reads or moves them; a decider that
// finds an entry so held, or finds no entry, leaves the decision to the
// owner's path (see Store.apply). t and a are read and written only by
// the entry's holder; h1 and the key's bits of tag change only while the
// owner holds the entry, or the slot is empty.
type entry struct {
	h1   atomic.Uint64
	tag  atomic.Uint64
	t, a int64
}

// The layout of entry.tag.
const (
	lockFree   = 0 // nobody holds the entry
	lockDecide = 1 // a decider without the shard's mutex holds it, for one decision
	lockShard  = 2 // the holder of the shard's mutex holds it
	lockBits   = 3
	tagMark    = 4 // set in every key's tag: a tag is never 0
	expShift   = 3
	expNever   = 1<<32 - 1 // the largest expiry field: never expires
	expMask    = expNever << expShift
	idMask     = 1<<64 - 1<<(expShift+32)
	keyMask    = idMask | tagMark // the bits of a tag that name the key
)

// names reports whether tag is the tag of h's entry (whatever its expiry
// and lock state).
func (h hash) names(tag uint64) bool { return tag&keyMask == h.h2 }

// tag returns the tag of h's entry, unheld, expiring at exp.
func (h hash) tag(exp int64) uint64 { return h.h2 | expField(exp) }

// expField returns exp (µs since sluice.Epoch) as tag bits: whole seconds,
// rounded up, in [0, expNever].
func expField(exp int64) uint64 {
	if exp <= 0 {
		return 0
	}
	s := (uint64(exp) + 999_999) / 1e6 // unsigned: one multiplication, no sign fix-up
	return min(s, expNever) << expShift
}

// expiryOf returns when the state of the entry whose tag is tag becomes
// equivalent to a fresh one (µs since sluice.Epoch); 1<<62 means never.
func expiryOf(tag uint64) int64 {
	s := (tag & expMask) >> expShift
	if s == expNever {
		return 1 << 62
	}
	return int64(s) * 1e6
}

// acquire takes e, the slot of h, for one decision without the shard's
// mutex, waiting while another such decision holds it, and returns its tag
// as it was (for release, when the decision changes nothing). It reports
// false, holding nothing, when e no longer holds h or the shard's owner
// holds it: the caller then decides under the mutex.
func (e *entry) acquire(h hash) (uint64, bool) {
	for spins := 0; ; spins++ {
		tag := e.tag.Load()
		if !h.names(tag) {
			return 0, false
		}
		switch tag & lockBits {
		case lockFree:
			if e.tag.CompareAndSwap(tag, tag|lockDecide) {
				// h1 changes only while the owner holds e: taken unheld,
				// e has not changed since it matched, unless it was
				// replaced by a key with the same bits of h2.
				if e.h1.Load() == h.h1 {
					return tag, true
				}
				e.tag.Store(tag)
				return 0, false
			}
		case lockShard:
			return 0, false
		}
		backoff(spins)
	}
}

// release ends a decision's hold of e, leaving tag (which must name e's
// key, unheld) in it.
func (e *entry) release(tag uint64) { e.tag.Store(tag) }

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

// setExpiry makes e, which the owner holds, expire at exp.
func (e *entry) setExpiry(exp int64) {
	e.tag.Store(e.tag.Load()&^expMask | expField(exp))
}

// backoff waits a little before the spins-th retry of a held entry: a
// decision holds one for tens of nanoseconds, so spin at first, then let
// other goroutines run (the holder may have been descheduled).
func backoff(spins int) {
	if spins >= 16 {
		runtime.Gosched()
	}
}
