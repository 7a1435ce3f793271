package memory

import (
	"math/rand/v2"
	"time"

	"github.com/sluice-dev/sluice"
)

// room is what an attempt to free a state of a full shard found.
type room uint8

const (
	roomMade    room = iota // a state was freed
	roomRefused             // every state it could free refuses: none was
	roomOwn                 // every state it looked at is the call's own
)

// victim is the state pick chose: slot of t, whose entry it holds (unless
// taken is false: the caller already held it), and its rank.
type victim struct {
	t     *table
	slot  int
	taken bool
	r     rank
}

// picker finds the state of a shard that ranks first.
type picker struct {
	now     int64
	protect []hash
	best    victim
	found   bool
}

// consider ranks slot i of t, keeping it held if it is the best so far.
func (p *picker) consider(t *table, i int) {
	e := &t.arr.es[i]
	if protected(p.protect, keyOf(e)) || p.found && p.best.t == t && p.best.slot == i {
		return
	}
	taken := e.hold()
	r := t.rank(i, p.now)
	if p.found && !r.before(p.best.r) {
		if taken {
			e.letGo()
		}
		return
	}
	p.letGo()
	p.best, p.found = victim{t, i, taken, r}, true
}

// letGo lets go of the best state so far.
func (p *picker) letGo() {
	if p.found && p.best.taken {
		p.best.t.arr.es[p.best.slot].letGo()
	}
}

// pick returns the state of the shard to evict and reports whether it
// found one not in protect (the keys of the call being decided), holding
// its entry. It looks at evictionSample states from a random place and,
// while it has found only refusing ones, further: at every state of a
// shard that holds at most evictionSample·evictionRounds of them, else at
// evictionSample more from another random place, up to evictionRounds
// times in all.
func (sh *shard) pick(now int64, protect []hash) (victim, bool) {
	p := picker{now: now, protect: protect}
	var buf [evictionSample]int
	for round := range evictionRounds {
		if round > 0 && sh.keys <= evictionSample*evictionRounds {
			for _, t := range sh.order {
				for i := range t.arr.es {
					if t.arr.es[i].h1.Load() != 0 {
						p.consider(t, i)
					}
				}
			}
			break
		}
		t := sh.randomTable()
		for _, i := range t.sample(buf[:0]) {
			p.consider(t, i)
		}
		if p.found && p.best.r.class != classRefusing {
			break
		}
	}
	return p.best, p.found
}

// randomTable returns one of the shard's tables, each as likely as the
// share of the shard's states it holds.
func (sh *shard) randomTable() *table {
	k := rand.IntN(max(sh.keys, 1))
	for _, t := range sh.order {
		if k < t.n {
			return t
		}
		k -= t.n
	}
	return sh.order[len(sh.order)-1]
}

// evict frees the state of the full shard that pick chooses, unless it
// refuses: then it frees nothing and returns roomRefused and the time, in
// µs since sluice.Epoch, at which that state stops refusing.
func (sh *shard) evict(s *Store, now int64, protect []hash) (room, int64) {
	v, ok := sh.pick(now, protect)
	if !ok {
		return roomOwn, 0
	}
	if v.r.class == classRefusing {
		if v.taken {
			v.t.arr.es[v.slot].letGo()
		}
		return roomRefused, v.r.v
	}
	v.t.remove(v.slot)
	sh.keys--
	if v.r.class == classFull {
		s.expirations.Add(1)
	} else {
		s.evictions.Add(1)
	}
	return roomMade, 0
}

// makeRoom makes the shard able to take n more states within the bound:
// it first forgets the shard's expired states (at most once per sweepGap),
// then evicts. It reports false, with the time at which the state that stopped
// it stops refusing, when only refusing states are left to evict (the
// states evicted before stay evicted). When only the call's own states are
// left, it reports true: the call's states exceed the bound until the next
// insert evicts them.
func (sh *shard) makeRoom(s *Store, now int64, n int, protect []hash) (until int64, ok bool) {
	if sh.keys+n > s.perShard && sh.soonest <= now && now-sh.swept >= sweepGap {
		s.expirations.Add(int64(sh.sweep(now, false)))
	}
	for sh.keys+n > s.perShard {
		switch r, at := sh.evict(s, now, protect); r {
		case roomRefused:
			return at, false
		case roomOwn:
			return 0, true
		}
	}
	return 0, true
}

// refuseNoRoom writes into st the refusal of a check whose key the store
// could not take: it may be admitted once the state that kept it out stops
// refusing, at until (µs since sluice.Epoch).
func refuseNoRoom(st *sluice.Status, now, until int64) {
	wait := sluice.Never
	if d := max(until-now, 1); d < int64(sluice.Never/time.Microsecond) {
		wait = time.Duration(d) * time.Microsecond
	}
	*st = sluice.Status{ResetAfter: wait, RetryAfter: wait}
}

func protected(hashes []hash, h hash) bool {
	for _, p := range hashes {
		if p == h {
			return true
		}
	}
	return false
}
