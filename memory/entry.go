package memory

import (
	"runtime"
	"sync/atomic"
)

// A key is known by a 93-bit hash of its bytes (64 bits from one seeded
// lane of keyHasher and 29 from the other, independently seeded), not by
// the string itself: an entry then holds no pointers, compares two
// integers instead of chasing a string, and inserting a key allocates
// nothing. Two keys share state only if both hashes collide — for a
// million keys held at once a chance of about 10^-16.
//
// h2 keeps its top 29 bits (idMask) and tagMark, so that it is the part of
// an entry's tag that names the key.
type hash struct{ h1, h2 uint64 }

// An entry is one key's place in its shard's array (see array): two words
// of header, h1 and tag, then the key's states, one slot each. h1 == 0
// marks an empty entry (a key's h1 has its low bit set). tag packs, from
// the top: 29 bits of the key's h2, the entry's expiry in whole seconds
// since sluice.Epoch rounded up (expShift; saturated: never), tagMark (so
// that a key's tag is never the empty entry's 0) and the lock state
// (lockBits). The entry's expiry is never earlier than that of any of its
// states: once it has passed, every state of the key is back at full
// quota.
//
// The lock covers the whole entry, every state of the key: a call takes
// it once for all its checks on the key. A decider without the shard's
// mutex takes it (lockDecide) with one compare-and-swap. The holder of the
// shard's mutex (the owner) takes entries with lockShard before it reads,
// moves or changes them; a decider that finds an entry so held, or finds
// no entry, or not all of its states inline, leaves the decision to the
// owner's path (see Store.apply). A slot's words are read and written only
// by the entry's holder; h1 and the key's bits of tag change only while
// the owner holds the entry, or the entry is empty.

// The layout of an entry's tag.
const (
	lockFree   = 0 // nobody holds the entry
	lockDecide = 1 // a decider without the shard's mutex holds it, for one decision
	lockShard  = 2 // the holder of the shard's mutex holds it
	lockBits   = 3
	tagMark    = 4 // set in every key's tag: a tag is never 0
	expShift   = 3
	expNever   = 1<<32 - 1 // the largest expiry in seconds: never expires
	expMask    = expNever << expShift
	idMask     = 1<<64 - 1<<(expShift+32)
	keyMask    = idMask | tagMark // the bits of a tag that name the key
)

// names reports whether tag is the tag of h's entry (whatever its expiry
// and lock state).
func (h hash) names(tag uint64) bool { return tag&keyMask == h.h2 }

// tag returns the tag of h's entry, unheld, expiring at secs (see expSecs).
func (h hash) tag(secs uint64) uint64 { return h.h2 | secs<<expShift }

// expSecs returns exp (µs since sluice.Epoch) in whole seconds, rounded
// up, in [0, expNever].
func expSecs(exp int64) uint64 {
	if exp <= 0 {
		return 0
	}
	s := (uint64(exp) + 999_999) / 1e6 // unsigned: one multiplication, no sign fix-up
	return min(s, expNever)
}

// secsExpiry returns the expiry of secs (see expSecs) in µs since
// sluice.Epoch; 1<<62 means never.
func secsExpiry(secs uint64) int64 {
	if secs == expNever {
		return 1 << 62
	}
	return int64(secs) * 1e6
}

// tagSecs returns the expiry in the tag of an entry, in seconds.
func tagSecs(tag uint64) uint64 { return (tag & expMask) >> expShift }

// acquire takes the entry at base, the entry of h, for one decision
// without the shard's mutex, waiting while another such decision holds
// it, and returns its tag as it was (for release, when the decision
// changes nothing). It reports false, holding nothing, when the entry no
// longer holds h or the shard's owner holds it: the caller then decides
// under the mutex.
func (a *array) acquire(base int, h hash) (uint64, bool) {
	tagp := &a.w[base+1]
	for spins := 0; ; spins++ {
		tag := atomic.LoadUint64(tagp)
		if !h.names(tag) {
			return 0, false
		}
		switch tag & lockBits {
		case lockFree:
			if atomic.CompareAndSwapUint64(tagp, tag, tag|lockDecide) {
				// h1 changes only while the owner holds the entry:
				// taken unheld, it has not changed since it matched,
				// unless it was replaced by a key with the same bits of h2.
				if atomic.LoadUint64(&a.w[base]) == h.h1 {
					return tag, true
				}
				atomic.StoreUint64(tagp, tag)
				return 0, false
			}
		case lockShard:
			return 0, false
		}
		backoff(spins)
	}
}

// release ends a decision's hold of the entry at base, leaving tag (which
// must name its key, unheld) in it.
func (a *array) release(base int, tag uint64) { atomic.StoreUint64(&a.w[base+1], tag) }

// hold takes the entry at base for the shard's owner (the caller holds the
// shard's mutex), waiting for a decision in progress to end. It reports
// false when the owner already held it (a call that names one key twice),
// true when it took it now; only what it took is to be let go. The entry
// must not be empty.
func (a *array) hold(base int) bool {
	tagp := &a.w[base+1]
	for spins := 0; ; spins++ {
		tag := atomic.LoadUint64(tagp)
		switch tag & lockBits {
		case lockShard:
			return false
		case lockFree:
			if atomic.CompareAndSwapUint64(tagp, tag, tag|lockShard) {
				return true
			}
		}
		backoff(spins)
	}
}

// letGo ends the owner's hold of the entry at base.
func (a *array) letGo(base int) {
	tagp := &a.w[base+1]
	atomic.StoreUint64(tagp, atomic.LoadUint64(tagp)&^lockBits)
}

// setSecs makes the entry at base, which the owner holds, expire at secs.
func (a *array) setSecs(base int, secs uint64) {
	tagp := &a.w[base+1]
	atomic.StoreUint64(tagp, atomic.LoadUint64(tagp)&^expMask|secs<<expShift)
}

// keyAt returns the hash of the entry at base, which is not empty.
func (a *array) keyAt(base int) hash {
	return hash{atomic.LoadUint64(&a.w[base]), atomic.LoadUint64(&a.w[base+1]) & keyMask}
}

// backoff waits a little before the spins-th retry of a held entry: a
// decision holds one for tens of nanoseconds, so spin at first, then let
// other goroutines run (the holder may have been descheduled).
func backoff(spins int) {
	if spins >= 16 {
		runtime.Gosched()
	}
}
