package memory

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// room is what an attempt to free a key of a full shard found.
type room uint8

const (
	roomMade    room = iota // a key was freed
	roomRefused             // every key it could free refuses: none was
	roomOwn                 // every state it looked at is the call's own
)

// victim is the state pick chose: slot of the entry at base (or, if side
// ≥ 0, its key's side state side), whose entry it holds (unless taken is
// false: the caller already held it), and its rank.
type victim struct {
	base, slot, side int
	taken            bool
	r                rank
}

// guard names the states of the call being decided, which an eviction for
// it never frees: check i's state is key hashes[i]'s under lc[i].lr. A
// key's other states may go.
type guard struct {
	hashes []hash
	lc     []lockedCheck
}

// keeps reports whether g names h's state of ref.
func (g guard) keeps(h hash, ref uint32) bool {
	for i := range g.hashes {
		if g.hashes[i] == h && g.lc[i].lr.ref == ref {
			return true
		}
	}
	return false
}

// picker finds the state of a shard that ranks first.
type picker struct {
	now     int64
	protect guard
	best    victim
	found   bool
}

// consider ranks the states of the key of the entry at base for p,
// keeping the entry held if one of them is the best so far.
func (sh *shard) consider(s *Store, p *picker, base int) {
	a := sh.arr
	h := a.keyAt(base)
	if p.found && p.best.base == base {
		return
	}
	taken := a.hold(base)
	kept := false
	better := func(v victim) {
		if p.found && !v.r.before(p.best.r) {
			return
		}
		if p.found && p.best.base != base && p.best.taken {
			a.letGo(p.best.base)
		}
		p.best, p.found, kept = v, true, true
	}
	var st sluice.State
	for k := range a.width {
		sl := base + firstSlot + k*slotWords
		m := a.w[sl]
		ref := uint32(m >> metaRefPos)
		if m == 0 || ref&contBit != 0 || p.protect.keeps(h, ref) {
			continue
		}
		lr := s.limits.of(ref)
		st = sluice.State{}
		a.read(lr.kind, sl, &st)
		better(victim{base, sl, -1, taken, rankState(lr, &st, m&secsMask, p.now)})
	}
	for i, ss := range sh.side[h] {
		if p.protect.keeps(h, ss.ref) {
			continue
		}
		st = ss.state()
		better(victim{base, noSlot, i, taken, rankState(s.limits.of(ss.ref), &st, ss.secs, p.now)})
	}
	if !kept && taken {
		a.letGo(base)
	}
}

// pick returns the state of the shard to evict and reports whether it
// found one that protect does not keep (the call's own states),
// holding its key's entry. It looks at the states of evictionSample keys
// from a random place and, while it has found only refusing ones,
// further: at every key of a shard that holds at most
// evictionSample·evictionRounds of them, else at evictionSample more from
// another random place, up to evictionRounds times in all.
func (sh *shard) pick(s *Store, now int64, protect guard) (victim, bool) {
	p := picker{now: now, protect: protect}
	a := sh.arr
	var buf [evictionSample]int
	for round := range evictionRounds {
		if round > 0 && a.used <= evictionSample*evictionRounds {
			for base := 0; base < len(a.w); base += a.stride {
				if a.w[base] != 0 {
					sh.consider(s, &p, base)
				}
			}
			break
		}
		for _, base := range a.sample(buf[:0]) {
			sh.consider(s, &p, base)
		}
		if p.found && p.best.r.class != classRefusing {
			break
		}
	}
	return p.best, p.found
}

// evict frees the state of the full shard that pick chooses, unless it
// refuses: then it frees nothing and returns roomRefused and the time, in
// µs since sluice.Epoch, at which that state stops refusing. A key left
// with no state goes too.
func (sh *shard) evict(s *Store, now int64, protect guard) (room, int64) {
	v, ok := sh.pick(s, now, protect)
	if !ok {
		return roomOwn, 0
	}
	a := sh.arr
	if v.r.class == classRefusing {
		if v.taken {
			a.letGo(v.base)
		}
		return roomRefused, v.r.v
	}
	h := a.keyAt(v.base)
	if v.side >= 0 {
		ss := &sh.side[h][v.side]
		log := ss.state()
		sh.noteFreed(s, h, s.limits.of(ss.ref), &log, v.r, now)
		sh.dropSide(h, v.side)
	} else {
		lr := s.limits.of(uint32(a.w[v.slot] >> metaRefPos))
		var st sluice.State
		a.read(lr.kind, v.slot, &st)
		sh.noteFreed(s, h, lr, &st, v.r, now)
		a.clear(lr.kind, v.slot)
	}
	sh.keys--
	if v.r.class == classFull {
		s.expirations.Add(1)
	} else {
		s.evictions.Add(1)
	}
	if sh.states(v.base, h) == 0 {
		a.remove(v.base)
	} else {
		a.setSecs(v.base, sh.entrySecs(v.base, h))
		if v.taken {
			a.letGo(v.base)
		}
	}
	return roomMade, 0
}

// noteFreed notes the eviction at now of h's state of lr, st, ranked r:
// one back at full quota as an expired state (see noteExpired), which
// may still count a receipt given under a limit of its ID with a longer
// window, any other as evicted (see noteEvicted). The caller holds sh.mu.
func (sh *shard) noteFreed(s *Store, h hash, lr *limitRef, st *sluice.State, r rank, now int64) {
	if r.class == classFull {
		sh.noteExpired(h, lr, st, r.exp, now)
		return
	}
	sh.noteEvicted(h, lr, st, max(now, s.clock.notBefore()))
}

// makeRoom makes the shard able to take n more units within the bound
// (a state each, and the room of logs: see logUnits): it first forgets the
// shard's expired states (at most once per sweepGap), then evicts. It
// reports false, with the time at which the key that stopped it stops
// refusing, when only refusing keys are left to evict (the states evicted
// before stay evicted). When only the call's own states are left, it
// reports true: the call's states exceed the bound until the next insert
// or log growth evicts them.
func (sh *shard) makeRoom(s *Store, now int64, n int, protect guard) (until int64, ok bool) {
	if sh.used()+n > s.perShard && sh.soonest <= now && now-sh.swept >= sweepGap {
		sh.sweep(s, now, false)
	}
	for sh.used()+n > s.perShard {
		switch r, at := sh.evict(s, now, protect); r {
		case roomRefused:
			return at, false
		case roomOwn:
			return 0, true
		}
	}
	return 0, true
}

// refuseNoRoom writes into st the refusal of a check whose state the store
// could not take: it may be admitted once the key that kept it out stops
// refusing, at until (µs since sluice.Epoch). Nothing was counted: the
// status is NoRoom, its Remaining and ResetAfter no measure of the key's
// use.
func refuseNoRoom(st *sluice.Status, now, until int64) {
	wait := sluice.Never
	if d := max(until-now, 1); d < int64(sluice.Never/time.Microsecond) {
		wait = time.Duration(d) * time.Microsecond
	}
	*st = sluice.Status{ResetAfter: wait, RetryAfter: wait, NoRoom: true}
}
