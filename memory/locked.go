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
	)
	for made := false; ; made = true {
		s.locateAll(checks, hashes, idx, lc, states)
		var lagged bool
		now, lagged = s.clock.nowFor(checks) // after the wait for the mutexes
		changed, err = sluice.DecideBatch(checks, states, now, out)
		if err == nil && lagged && refused(out) {
			now = s.clock.exact()
			s.loadAll(hashes, idx, lc, states)
			changed, err = sluice.DecideBatch(checks, states, now, out)
		}
		if err != nil {
			s.letGoTaken(idx, lc)
			return 0, err
		}
		if !changed || made || s.fits(checks, states, lc, idx, locked) {
			break
		}
		s.letGoTaken(idx, lc)
		at := now
		if lagged {
			at = s.clock.exact()
		}
		if s.makeRoomFor(checks, states, lc, idx, locked, guard{hashes, lc}, at, out) {
			continue
		}
		// Refused for want of room: the other checks report their states
		// as a peek would.
		s.locateAll(checks, hashes, idx, lc, states)
		now, changed = at, false
		peekAllowed(checks, states, now, out)
		break
	}
	for i := range checks { // existing states first: inserts may move entries
		if lc[i].held && changed {
			s.shards[idx[i]].store(lc[i].p, hashes[i], lc[i].lr, &states[i], expiry(now, &out[i]))
		}
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

// locateAll finds and holds the state of every check (see shard.locate)
// and loads it, or a fresh state, into states.
func (s *Store) locateAll(checks []sluice.Check, hashes []hash, idx []uint32, lc []lockedCheck, states []sluice.State) {
	for i := range checks {
		c := &lc[i]
		c.p, c.taken, c.held = s.shards[idx[i]].locate(hashes[i], c.lr)
	}
	s.loadAll(hashes, idx, lc, states)
}

// loadAll loads into states[i] the state of check i if the store holds
// it, else a fresh state.
func (s *Store) loadAll(hashes []hash, idx []uint32, lc []lockedCheck, states []sluice.State) {
	for i := range lc {
		states[i] = sluice.State{}
		if lc[i].held {
			s.shards[idx[i]].load(lc[i].p, hashes[i], lc[i].lr, &states[i])
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

// newStates returns how many enforcing checks of an admitted call insert
// a new state into shard k (see enforcingNew).
func newStates(checks []sluice.Check, states []sluice.State, lc []lockedCheck, idx []uint32, k uint32) int {
	n := 0
	for i := range checks {
		if idx[i] == k && enforcingNew(checks, states, lc, i) {
			n++
		}
	}
	return n
}

// fits reports whether every shard of an admitted call (locked) can take
// the new states of its enforcing checks without evicting.
func (s *Store) fits(checks []sluice.Check, states []sluice.State, lc []lockedCheck, idx, locked []uint32) bool {
	for _, k := range locked {
		if n := newStates(checks, states, lc, idx, k); n > 0 && s.shards[k].keys+n > s.perShard {
			return false
		}
	}
	return true
}

// makeRoomFor makes room in every shard of an admitted call (locked),
// whose states are let go, for the new states of its enforcing checks,
// judging states at at. It reports false when some shard could not make
// it, having written the refusal of those checks into out.
func (s *Store) makeRoomFor(checks []sluice.Check, states []sluice.State, lc []lockedCheck, idx, locked []uint32, protect guard, at int64, out []sluice.Status) bool {
	ok := true
	for _, k := range locked {
		n := newStates(checks, states, lc, idx, k)
		if n == 0 {
			continue
		}
		until, made := s.shards[k].makeRoom(s, at, n, protect)
		if made {
			continue
		}
		ok = false
		for i := range checks {
			if idx[i] == k && enforcingNew(checks, states, lc, i) {
				refuseNoRoom(&out[i], at, until)
				s.noRoom.Add(1)
			}
		}
	}
	return ok
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
