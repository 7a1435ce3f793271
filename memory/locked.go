package memory

import (
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
)

// lockedCheck is where applyLocked finds one check's state.
type lockedCheck struct {
	lr    *limitRef
	p     place
	taken bool // the call took the entry for this check (see shard.locate)
	held  bool // the store holds the state
	// live: the store holds the state and it had not expired when loaded
	// (see loadAll); an expired one is decided as a fresh state.
	live bool
	// log is the sliding log loaded for this check: a decision that
	// leaves its state in log's array needs no room.
	log []sluice.LogEntry
	// seeded: the state loaded is a fresh lease book seeded with the time
	// of its key's last reset (see shard.seedLeases).
	seeded bool
}

// applyLocked decides checks under the mutexes of their shards.
//
// An admitted call's new states are inserted after its held states are
// stored and let go, as an insert may move entries. When the new states
// of its enforcing checks do not fit in their shards, the call first lets
// its states go, makes room (eviction moves entries too) and decides
// again; if only refusing keys could make that room, the call is refused
// and changes nothing.
//
// It returns an error, having changed nothing, for checks that
// ValidateChecks refuses.
func (s *Store) applyLocked(checks []sluice.Check, out []sluice.Status, sc *scratch) (int64, error) {
	// Before any limit is noted: an invalid one must never reach the
	// registry, whose limits judge the states to evict.
	if err := sluice.ValidateChecks(checks); err != nil {
		return 0, err
	}
	hashes, idx, states := sc.hashes, sc.idx, sc.states
	var (
		lcBuf     [8]lockedCheck
		lockedBuf [8]uint32
	)
	lc, locked := lcBuf[:0], lockedBuf[:0]
	if n := len(checks); n > len(lcBuf) {
		lc, locked = make([]lockedCheck, 0, n), make([]uint32, 0, n)
	}
	for i := range checks {
		lr := s.limits.note(&checks[i].Limit)
		if lr == nil {
			s.limitsRefused.Add(1)
			return 0, errTooManyLimits(&checks[i].Limit, s.limits.max)
		}
		lc = append(lc, lockedCheck{lr: lr})
		locked = insertSorted(locked, idx[i])
	}
	for _, k := range locked { // ascending order: no deadlock between calls
		s.shards[k].mu.Lock()
	}
	defer func() {
		for _, k := range locked {
			s.shards[k].mu.Unlock()
		}
	}()
	var (
		now     int64
		changed bool
		err     error
		// noRoom: refused for want of room, not by a limit.
		noRoom bool
	)
	for made := false; ; made = true {
		s.locateAll(hashes, idx, lc)
		var lagged bool
		now, lagged = s.clock.nowFor(checks) // after the wait for the mutexes
		s.loadAll(hashes, idx, lc, states, s.liveAfter(now))
		for i := range checks {
			lc[i].lr.noteMode(&checks[i].Limit, now)
		}
		changed, err = sluice.DecideBatch(checks, states, now, out)
		if err == nil && lagged && refused(out) {
			now = s.clock.exact()
			s.loadAll(hashes, idx, lc, states, s.liveAfter(now))
			changed, err = sluice.DecideBatch(checks, states, now, out)
		}
		unseedAll(lc, states)
		if err != nil {
			s.letGoTaken(idx, lc)
			return 0, err
		}
		if !changed || made || s.fits(checks, states, lc, hashes, idx, locked) {
			break
		}
		s.letGoTaken(idx, lc)
		at := now
		if lagged {
			at = s.clock.exact()
		}
		if s.makeRoomFor(checks, states, lc, hashes, idx, locked, guard{hashes, lc}, at, out) {
			continue
		}
		// Refused for want of room: the other checks report their states
		// as a peek would.
		s.locateAll(hashes, idx, lc)
		s.loadAll(hashes, idx, lc, states, s.liveAfter(at))
		now, changed, noRoom = at, false, true
		peekAllowed(checks, states, now, out)
		unseedAll(lc, states)
		break
	}
	if !changed && !noRoom {
		s.outliveAll(checks, hashes, idx, lc, now, out)
	}
	// Existing states first: inserts may move entries. A shadow log that
	// must grow past its room at a full shard grows after the inserts.
	var grownBuf [8]int
	grown := grownBuf[:0]
	for i := range checks {
		if !lc[i].held {
			continue
		}
		sh := &s.shards[idx[i]]
		if !changed {
			if !lc[i].live {
				sh.clearExpired(lc[i].p, lc[i].lr) // noted by loadAll
			}
			continue
		}
		grow := true
		if len(states[i].Log) > 0 && !sameArray(lc[i].log, states[i].Log) {
			if g := sh.growth(s, lc[i].p, hashes[i], lc[i].lr, &states[i]); checks[i].Limit.Shadow() && g > 0 && sh.used()+g > s.perShard {
				grown = append(grown, i)
				continue
			}
			grow = sh.grows(s, lc[i].p, hashes[i], lc[i].lr, &states[i])
		}
		sh.store(lc[i].p, hashes[i], lc[i].lr, &states[i], expiry(now, &out[i]), grow)
	}
	s.letGoTaken(idx, lc)
	if changed {
		// Enforcing checks first: room was made for them. A shadow state
		// that finds no room is not kept, and its check reports what an
		// enforcing one would have: refused for want of room, nothing
		// counted.
		for _, shadow := range [2]bool{false, true} {
			for i := range checks {
				if !lc[i].held && !isZero(&states[i]) && checks[i].Limit.Shadow() == shadow {
					if until, ok := s.shards[idx[i]].insert(s, hashes[i], lc[i].lr, &states[i], expiry(now, &out[i]), now, guard{hashes, lc}, !shadow); !ok {
						refuseNoRoom(&out[i], now, until)
						s.noRoom.Add(1)
					}
				}
			}
		}
	}
	for _, i := range grown {
		s.growShadow(checks, states, lc, hashes, idx, i, now, out)
	}
	return now, nil
}

// errTooManyLimits is the error of a call that checks l, a limit the
// store does not know, when it knows max limits (see WithMaxLimits).
func errTooManyLimits(l *sluice.Limit, max int) error {
	return fmt.Errorf("memory: %w: limit %q (%v) would be one more than the %d limits the store may know (see WithMaxLimits)",
		sluice.ErrStoreUnavailable, l.ID(), l.Algorithm(), max)
}

// peekAllowed replaces the Status of each allowed check by a peek at its
// state at now; checks have passed ValidateChecks.
func peekAllowed(checks []sluice.Check, states []sluice.State, now int64, out []sluice.Status) {
	for i := range checks {
		if !out[i].Allowed {
			continue
		}
		if _, st, err := checks[i].Limit.Decide(states[i], now, 0); err == nil {
			out[i] = st
		}
	}
}

// locateAll finds and holds the state of every check (see shard.locate).
func (s *Store) locateAll(hashes []hash, idx []uint32, lc []lockedCheck) {
	for i := range lc {
		c := &lc[i]
		c.p, c.taken, c.held = s.shards[idx[i]].locate(hashes[i], c.lr)
	}
}

// loadAll loads into states[i] the state of check i if the store holds
// it and its expiry (see expSecs) is after after (see Store.liveAfter),
// else a fresh state: for a concurrency limit reset lately, one seeded
// with the reset's time, which unseedAll takes out after the decision
// (see shard.seedLeases). A state held past its expiry that still counted
// something is noted as expired (see shard.noteExpired) before the fresh
// one is seeded: the decision overwrites it, or applyLocked clears it.
func (s *Store) loadAll(hashes []hash, idx []uint32, lc []lockedCheck, states []sluice.State, after int64) {
	for i := range lc {
		c, sh := &lc[i], &s.shards[idx[i]]
		states[i] = sluice.State{}
		var exp int64
		if c.held {
			exp = sh.expiryAt(c.p, hashes[i], c.lr)
		}
		c.live = c.held && exp > after
		if c.live {
			sh.load(s, c.p, hashes[i], c.lr, &states[i])
		} else {
			if c.held {
				sh.load(s, c.p, hashes[i], c.lr, &states[i])
				sh.noteExpired(hashes[i], c.lr, &states[i], exp, after)
				states[i] = sluice.State{}
			}
			sh.seedLeases(hashes[i], c.lr, &states[i])
		}
		c.log, c.seeded = states[i].Log, !c.live && len(states[i].Log) > 0
	}
}

// unseedAll takes the seed out of the decided states of the checks whose
// fresh lease books loadAll seeded.
func unseedAll(lc []lockedCheck, states []sluice.State) {
	for i := range lc {
		if lc[i].seeded {
			unseedLeases(&states[i])
		}
	}
}

// letGoTaken lets go of the entries taken (see shard.locate).
func (s *Store) letGoTaken(idx []uint32, lc []lockedCheck) {
	for i := range lc {
		if lc[i].taken {
			s.shards[idx[i]].arr.letGo(lc[i].p.base)
			lc[i].taken = false
		}
	}
}

// enforcingNew reports whether check i of an admitted call, whose state
// after the decision is states[i], is an enforcing check that inserts a
// new state.
func enforcingNew(checks []sluice.Check, states []sluice.State, lc []lockedCheck, i int) bool {
	return !lc[i].held && !isZero(&states[i]) && !checks[i].Limit.Shadow()
}

// need returns how many units (see logUnits) check i of an admitted call,
// whose state after the decision is states[i], adds to its shard if it
// is an enforcing check: those of a new state, or the growth of a log
// past its room.
func (s *Store) need(checks []sluice.Check, states []sluice.State, lc []lockedCheck, hashes []hash, idx []uint32, i int) int {
	switch {
	case checks[i].Limit.Shadow():
		return 0
	case enforcingNew(checks, states, lc, i):
		return newUnits(lc[i].lr, &states[i])
	case lc[i].held && len(states[i].Log) > 0 && !sameArray(lc[i].log, states[i].Log):
		return max(s.shards[idx[i]].growth(s, lc[i].p, hashes[i], lc[i].lr, &states[i]), 0)
	}
	return 0
}

// needs returns how many units the enforcing checks of an admitted call
// add to shard k (see need).
func (s *Store) needs(checks []sluice.Check, states []sluice.State, lc []lockedCheck, hashes []hash, idx []uint32, k uint32) int {
	units := 0
	for i := range checks {
		if idx[i] == k {
			units += s.need(checks, states, lc, hashes, idx, i)
		}
	}
	return units
}

// fits reports whether every shard of an admitted call (locked) can take
// what its enforcing checks add without evicting.
func (s *Store) fits(checks []sluice.Check, states []sluice.State, lc []lockedCheck, hashes []hash, idx, locked []uint32) bool {
	for _, k := range locked {
		if n := s.needs(checks, states, lc, hashes, idx, k); n > 0 && s.shards[k].used()+n > s.perShard {
			return false
		}
	}
	return true
}

// makeRoomFor makes room in every shard of an admitted call (locked),
// whose states are let go, for what its enforcing checks add, judging
// states at at. It reports false when some shard could not make it,
// having written the refusal of those checks into out.
func (s *Store) makeRoomFor(checks []sluice.Check, states []sluice.State, lc []lockedCheck, hashes []hash, idx, locked []uint32, protect guard, at int64, out []sluice.Status) bool {
	// What each check needs, before any room is made: making it may
	// forget a state of the call that has expired.
	var needBuf [8]int
	need := needBuf[:0]
	if len(checks) > len(needBuf) {
		need = make([]int, 0, len(checks))
	}
	for i := range checks {
		need = append(need, s.need(checks, states, lc, hashes, idx, i))
	}
	ok := true
	for _, k := range locked {
		n := 0
		for i := range checks {
			if idx[i] == k {
				n += need[i]
			}
		}
		if n == 0 {
			continue
		}
		until, made := s.shards[k].makeRoom(s, at, n, protect)
		if made {
			continue
		}
		ok = false
		for i := range checks {
			if idx[i] == k && need[i] > 0 {
				refuseNoRoom(&out[i], at, until)
				s.noRoom.Add(1)
			}
		}
	}
	return ok
}

// growShadow stores the state of check i of an admitted call, a shadow
// log the shard holds that must grow past its room at a full shard, once
// the call's entries are let go and its new states inserted: it makes
// room as a new shadow state does, and when it finds none keeps the state
// as it was, and the check reports what an enforcing one would have:
// refused for want of room, nothing counted.
func (s *Store) growShadow(checks []sluice.Check, states []sluice.State, lc []lockedCheck, hashes []hash, idx []uint32, i int, now int64, out []sluice.Status) {
	sh := &s.shards[idx[i]]
	h, lr, exp, protect := hashes[i], lc[i].lr, expiry(now, &out[i]), guard{hashes, lc}
	for made := false; ; made = true {
		p, taken, ok := sh.locate(h, lr)
		if !ok {
			// Forgotten as expired while room was made: a new state.
			if until, ok := sh.insert(s, h, lr, &states[i], exp, now, protect, false); !ok {
				refuseNoRoom(&out[i], now, until)
				s.noRoom.Add(1)
			}
			return
		}
		if g := sh.growth(s, p, h, lr, &states[i]); !made && g > 0 && sh.used()+g > s.perShard {
			if taken {
				sh.arr.letGo(p.base) // eviction may move entries
			}
			if until, ok := sh.makeRoom(s, now, g, protect); !ok {
				refuseNoRoom(&out[i], now, until)
				s.noRoom.Add(1)
				return
			}
			continue
		}
		sh.store(p, h, lr, &states[i], exp, sh.grows(s, p, h, lr, &states[i]))
		if taken {
			sh.arr.letGo(p.base)
		}
		return
	}
}

// outliveAll makes each state the store holds for a call that changed none
// expire no earlier than its limit has it back at full quota, where the
// call refused it (see outlives); the caller holds the states' entries.
func (s *Store) outliveAll(checks []sluice.Check, hashes []hash, idx []uint32, lc []lockedCheck, now int64, out []sluice.Status) {
	blocked := blocking(checks, out)
	for i := range checks {
		if lc[i].live && outlives(blocked, &out[i]) {
			s.shards[idx[i]].outlive(lc[i].p, hashes[i], lc[i].lr, expiry(now, &out[i]))
		}
	}
}

// outlives reports whether a state that a call read and did not write must
// live until the limit that checked it has it back at full quota, as its
// status st says: when the call refused it, its own check or, blocked, an
// enforcing check of the call. A limit reloaded with a longer window counts
// the state beyond the expiry its last write gave it, and keeps counting
// it only while the store holds it; a peek leaves the expiry as it was. A
// call refused for want of room was refused by no limit, and a state read
// as fresh past its expiry is one the store no longer holds (as a Redis
// key past its TTL): the caller does not ask.
func outlives(blocked bool, st *sluice.Status) bool { return blocked || !st.Allowed }

// blocking reports whether an enforcing check of a call refused: the call
// then changed no state (see sluice.DecideBatch).
func blocking(checks []sluice.Check, out []sluice.Status) bool {
	for i := range out {
		if !out[i].Allowed && !checks[i].Limit.Shadow() {
			return true
		}
	}
	return false
}

// refused reports whether a check of a call refused. A call refused at a
// time the clock lags by is decided again at the exact time, so the lag
// never refuses a call (see clock); its states must be read afresh for
// that, as a refusal may have changed them.
func refused(out []sluice.Status) bool {
	for i := range out {
		if !out[i].Allowed {
			return true
		}
	}
	return false
}

// insertSorted adds v to the ascending set xs.
func insertSorted(xs []uint32, v uint32) []uint32 {
	i := len(xs)
	for i > 0 && xs[i-1] > v {
		i--
	}
	if i > 0 && xs[i-1] == v {
		return xs
	}
	xs = append(xs, 0)
	copy(xs[i+1:], xs[i:])
	xs[i] = v
	return xs
}

func isZero(st *sluice.State) bool { return st.T == 0 && st.A == 0 && st.B == 0 && len(st.Log) == 0 }

// expiry returns when a state whose status is st becomes equivalent to a
// fresh one.
func expiry(now int64, st *sluice.Status) int64 {
	return expiryAfter(now, int64(st.ResetAfter/time.Microsecond))
}

// expiryAfter returns when a state back to full quota in resetUS µs from now
// becomes equivalent to a fresh one.
func expiryAfter(now, resetUS int64) int64 { return now + min(resetUS, 1<<62) }
