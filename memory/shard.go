package memory

import (
	"sync"
	"sync/atomic"

	"github.com/sluice-dev/sluice"
)

// shard is one part of the store: the keys whose hash picks it, in an
// array of entries, and their side states. Everything but deciding for
// keys it holds (see Store.applyHeld) happens under mu.
type shard struct {
	mu   sync.Mutex
	arr  *array                 // the keys; replaced whole (see publish)
	dir  *atomic.Pointer[array] // the shard's slot of Store.dir
	side map[hash][]sideState
	// sidePeak is the most keys side has held since it was made: a map
	// keeps the room of the most it held (see sweep).
	sidePeak int
	keys     int // states held: in the array's entries and in side
	// logUnits is what the arrays of the logs in side count as toward the
	// bound, beyond their states (see logUnits).
	logUnits int
	// soonest is a lower bound of the expiry of every state held (µs); a
	// full shard sweeps itself only when it has passed, at most once per
	// sweepGap, so that a flood of live keys does not make every insert
	// scan the shard.
	soonest, swept int64
	// resets are the recent resets of states that refunds could still
	// reach (see noteReset); nil until the first.
	resets map[resetID]resetRecord
	// unseen are the recent Resets of states of limits the store had not
	// met (see noteUnseen); nil until the first.
	unseen map[unseenID]resetRecord
}

// publish makes a the shard's array, for the owner and for deciders.
func (sh *shard) publish(a *array) {
	sh.arr = a
	sh.dir.Store(a)
}

// place is where a state of a call is: slot of the entry at base of the
// shard's array (sideSlot: beside it).
type place struct {
	base, slot int
}

// locate finds h's state of lr and holds its entry for the owner; ok is
// false, holding nothing, for a state not held. taken is false when the
// owner already held the entry.
func (sh *shard) locate(h hash, lr *limitRef) (p place, taken, ok bool) {
	a := sh.arr
	base, found := a.find(h)
	if !found {
		return place{}, false, false
	}
	taken = a.hold(base)
	slot := noSlot
	if lr.kind != kindLog {
		slot = a.slotOf(base, lr.ref)
	}
	if slot == noSlot && sh.sideIndex(h, lr.ref) >= 0 {
		slot = sideSlot
	}
	if slot == noSlot {
		if taken {
			a.letGo(base)
		}
		return place{}, false, false
	}
	return place{base, slot}, taken, true
}

// used returns what the shard holds toward its bound: its states, and
// the room of its logs' arrays (see logUnits).
func (sh *shard) used() int { return sh.keys + sh.logUnits }

// load reads h's state of lr at p, which the owner holds, into *st. A
// log that has reached the end of its array is first shifted to the
// array's front when that is cheap, or when the shard could not take the
// array it would grow to without evicting (see sideState.compact).
func (sh *shard) load(s *Store, p place, h hash, lr *limitRef, st *sluice.State) {
	*st = sluice.State{}
	if p.slot == sideSlot {
		ss := &sh.side[h][sh.sideIndex(h, lr.ref)]
		if n := len(ss.st.Log) - int(ss.from); n > 0 {
			grow := logUnits(grownRoom(n+1)) - logUnits(ss.room())
			ss.compact(sh.used()+grow > s.perShard)
		}
		*st = ss.state()
		return
	}
	sh.arr.read(lr.kind, p.slot, st)
}

// growth returns how many units more than h's state of lr at p the state
// st counts as once stored by a decision (see sideState.growth): above 0
// for a log that must grow past its room. A log that the decision moved
// to another array but that fits in its own is shifted back there rather
// than grown when growing would not fit in the shard (see reuses): 0.
func (sh *shard) growth(s *Store, p place, h hash, lr *limitRef, st *sluice.State) int {
	if p.slot != sideSlot || lr.kind != kindLog {
		return 0
	}
	i := sh.sideIndex(h, lr.ref)
	if i < 0 {
		return 0
	}
	ss := &sh.side[h][i]
	g := ss.growth(st)
	if g > 0 && len(st.Log) <= ss.room() && sh.used()+g > s.perShard {
		return 0
	}
	return g
}

// grows reports whether a decision's state st of h's state of lr at p is
// stored by store(…, grow) with grow true: false for a log that fits in
// its own array when growing would not fit in the shard (see growth).
func (sh *shard) grows(s *Store, p place, h hash, lr *limitRef, st *sluice.State) bool {
	if p.slot != sideSlot || lr.kind != kindLog {
		return true
	}
	i := sh.sideIndex(h, lr.ref)
	if i < 0 {
		return true
	}
	ss := &sh.side[h][i]
	g := ss.growth(st)
	return !(g > 0 && len(st.Log) <= ss.room() && sh.used()+g > s.perShard)
}

// store writes st, expiring at exp, as h's state of lr at p, which the
// owner holds. A log moved to another array goes to one of grownRoom's
// room if grow (a decision, whose growth the caller has made room for),
// else back to its own array when it fits there (see sideState.keep).
func (sh *shard) store(p place, h hash, lr *limitRef, st *sluice.State, exp int64, grow bool) {
	secs := expSecs(exp)
	if p.slot == sideSlot {
		ss := &sh.side[h][sh.sideIndex(h, lr.ref)]
		sh.logUnits += ss.keep(st, grow)
		ss.secs = secs
	} else {
		sh.arr.write(lr.kind, p.slot, st, secs)
	}
	sh.arr.setSecs(p.base, sh.entrySecs(p.base, h))
	sh.soonest = min(sh.soonest, exp)
}

// outlive makes h's state of lr at p, which the owner holds, expire no
// earlier than exp, leaving it as it is.
func (sh *shard) outlive(p place, h hash, lr *limitRef, exp int64) {
	secs := expSecs(exp)
	if p.slot == sideSlot {
		ss := &sh.side[h][sh.sideIndex(h, lr.ref)]
		if secs <= ss.secs {
			return
		}
		ss.secs = secs
	} else if !sh.arr.raiseSecs(p.slot, secs) {
		return
	}
	sh.arr.setSecs(p.base, sh.entrySecs(p.base, h))
}

// clearExpired makes h's state of lr at p, which the owner holds and a
// call read past its expiry without writing it, count nothing, keeping
// its expiry: a call holding only its key's entry (see Store.applyHeld)
// then reads it as a fresh state again without noting it (see
// shard.noteExpired), and the sweep forgets it. A state beside the array
// is left as it is: only calls under the shard's mutex read it.
func (sh *shard) clearExpired(p place, lr *limitRef) {
	if p.slot == sideSlot {
		return
	}
	sh.arr.write(lr.kind, p.slot, &sluice.State{}, sh.arr.slotSecs(p.slot))
}

// expiryAt returns the expiry of h's state of lr at p, which the owner
// holds, in µs since the epoch (whole seconds, see expSecs).
func (sh *shard) expiryAt(p place, h hash, lr *limitRef) int64 {
	if p.slot == sideSlot {
		return secsExpiry(sh.side[h][sh.sideIndex(h, lr.ref)].secs)
	}
	return secsExpiry(sh.arr.slotSecs(p.slot))
}

// entrySecs returns the latest expiry of the states of h, whose entry is
// at base, in seconds.
func (sh *shard) entrySecs(base int, h hash) uint64 {
	return max(sh.arr.inlineSecs(base), sh.sideSecs(h))
}

// insert adds h's state of lr, st expiring at exp, first making room if
// the shard is full: it forgets the shard's expired states (at most once
// per sweepGap), else evicts (see makeRoom), at time at. The states
// protect keeps (the call being decided) are never evicted. It reports false,
// having added nothing, when only refusing states could make room, with
// the time at which the one that stopped it stops refusing; unless must,
// when it adds the state above the bound.
func (sh *shard) insert(s *Store, h hash, lr *limitRef, st *sluice.State, exp, at int64, protect guard, must bool) (until int64, ok bool) {
	if until, ok := sh.makeRoom(s, at, newUnits(lr, st), protect); !ok && !must {
		return until, false
	}
	sh.add(h, lr, st, exp)
	sh.keys++
	sh.soonest = min(sh.soonest, exp)
	return 0, true
}

// newUnits returns how many states st, a new state of lr, counts as
// toward the bound once added (see logUnits).
func newUnits(lr *limitRef, st *sluice.State) int {
	if lr.kind != kindLog || len(st.Log) == 0 {
		return 1
	}
	return 1 + logUnits(grownRoom(len(st.Log)))
}

// add adds h's state of lr, which the shard does not hold: inline in h's
// entry (made if h has none) when it fits there, widening the array up to
// maxWidth slots if it must, else beside the array.
func (sh *shard) add(h hash, lr *limitRef, st *sluice.State, exp int64) {
	a := sh.arr
	base, found := a.find(h)
	if found {
		a.hold(base)
	} else {
		if a.full() {
			sh.publish(a.grown())
			a = sh.arr
		}
		base = a.insert(h)
	}
	secs := expSecs(exp)
	slot := sideSlot
	if need := lr.kind.slots(); need > 0 {
		slot = a.freeRun(base, need)
		if used := a.slotsUsed(base); slot == noSlot && used+need <= maxWidth {
			sh.publish(a.resized(a.n, max(a.width, used+need)))
			a = sh.arr
			base, _ = a.find(h)
			a.hold(base)
			slot = a.freeRun(base, need)
		}
	}
	if slot >= 0 {
		a.claim(lr.kind, slot, lr.ref)
		a.write(lr.kind, slot, st, secs)
	} else {
		ss, units := newSide(lr.ref, st, secs)
		sh.side[h] = append(sh.side[h], ss)
		sh.logUnits += units - 1
		sh.sidePeak = max(sh.sidePeak, len(sh.side))
	}
	a.setSecs(base, sh.entrySecs(base, h))
	a.letGo(base)
}

// forgetExpired forgets the states of h, whose entry at base the owner
// holds, that are back at full quota at now, counts them as expired and
// returns how many; it notes each that still counted something (see
// noteExpired). It lowers the soonest expiry of the shard to what is
// left.
func (sh *shard) forgetExpired(s *Store, base int, h hash, now int64) int {
	a := sh.arr
	forgot := 0
	for k := range a.width {
		sl := base + firstSlot + k*slotWords
		m := a.w[sl]
		if m == 0 || uint32(m>>metaRefPos)&contBit != 0 {
			continue
		}
		exp := secsExpiry(m & secsMask)
		if exp > now {
			sh.soonest = min(sh.soonest, exp)
			continue
		}
		lr := s.limits.of(uint32(m >> metaRefPos))
		var st sluice.State
		a.read(lr.kind, sl, &st)
		sh.noteExpired(h, lr, &st, exp, now)
		a.clear(lr.kind, sl)
		forgot++
	}
	for i := 0; i < len(sh.side[h]); {
		ss := &sh.side[h][i]
		exp := secsExpiry(ss.secs)
		if exp > now {
			sh.soonest = min(sh.soonest, exp)
			i++
			continue
		}
		log := ss.state()
		sh.noteExpired(h, s.limits.of(ss.ref), &log, exp, now)
		sh.dropSide(h, i)
		forgot++
	}
	sh.keys -= forgot
	s.expirations.Add(int64(forgot))
	return forgot
}

// states returns how many states h, whose entry is at base, holds.
func (sh *shard) states(base int, h hash) int {
	a := sh.arr
	n := len(sh.side[h])
	for k := range a.width {
		if m := a.w[base+firstSlot+k*slotWords]; m != 0 && uint32(m>>metaRefPos)&contBit == 0 {
			n++
		}
	}
	return n
}

// drop forgets h, whose entry at base the owner holds, with its states,
// and returns how many states it held.
func (sh *shard) drop(base int, h hash) int {
	n := sh.states(base, h)
	for _, ss := range sh.side[h] {
		sh.logUnits -= logUnits(ss.room())
	}
	delete(sh.side, h)
	sh.arr.remove(base)
	sh.keys -= n
	return n
}
