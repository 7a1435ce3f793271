package memory

import (
	"github.com/sluice-dev/sluice"
)

// scratch is the space one call is decided in: one element per check.
type scratch struct {
	hashes []hash
	idx    []uint32
	held   []heldCheck
	states []sluice.State
	order  []int // of capacity len(checks)
}

// apply decides checks and returns the time of the decision in µs since
// sluice.Epoch, by the store's clock (the one of WithClock, else the wall
// time at New plus the monotonic time since). It returns an error, having
// changed nothing, for checks that ValidateChecks refuses.
//
// A call is decided holding only the entries of its keys when the store
// holds every one of its states inline in the entry of its key (applyHeld),
// else under the mutexes of their shards (applyLocked).
func (s *Store) apply(checks []sluice.Check, out []sluice.Status) (int64, error) {
	// Scratch space for the call's checks: as much as a call of one check
	// needs, else of up to 8, else allocated.
	switch n := len(checks); {
	case n == 1:
		var (
			hashes [1]hash
			idx    [1]uint32
			held   [1]heldCheck
			order  [1]int
			states [1]sluice.State
		)
		return s.applyIn(checks, out, &scratch{hashes[:], idx[:], held[:], states[:], order[:0]})
	case n <= 8:
		var (
			hashes [8]hash
			idx    [8]uint32
			held   [8]heldCheck
			order  [8]int
			states [8]sluice.State
		)
		return s.applyIn(checks, out, &scratch{hashes[:n], idx[:n], held[:n], states[:n], order[:0]})
	default:
		return s.applyIn(checks, out, &scratch{make([]hash, n), make([]uint32, n), make([]heldCheck, n), make([]sluice.State, n), make([]int, 0, n)})
	}
}

// applyIn is apply with scratch space for len(checks).
func (s *Store) applyIn(checks []sluice.Check, out []sluice.Status, sc *scratch) (int64, error) {
	for i := range checks {
		if i > 0 && checks[i].Key == checks[i-1].Key {
			sc.hashes[i] = sc.hashes[i-1] // a plan's limits of one subject: hash it once
		} else {
			sc.hashes[i] = s.keyHash(checks[i].Key)
		}
		sc.idx[i] = s.shardIndex(sc.hashes[i])
	}
	if now, ok := s.applyHeld(checks, out, sc); ok {
		return now, nil
	}
	return s.applyLocked(checks, out, sc)
}

// heldCheck is one check of applyHeld: its limit lr, and where it finds
// the check's state: slot of the entry at base of a, the entry of the
// call's check lead (the first on its key).
type heldCheck struct {
	lr   *limitRef
	a    *array
	base int
	lead int
	slot int
	kind stateKind
	ref  uint32
	tag  uint64 // lead only: the entry's tag as taken, then as to be released
	// gone: the state in slot had expired when read, and was read as a
	// fresh one (see readHeld); a refusal leaves it so.
	gone bool
}

// applyHeld decides checks holding their keys' entries only, and reports
// false, having changed nothing, when one of them is not to be decided so
// (a new key or state, a state beside the array, an entry the shard's
// owner holds) or cannot be decided at all (applyLocked says why).
func (s *Store) applyHeld(checks []sluice.Check, out []sluice.Status, sc *scratch) (int64, bool) {
	held, hashes, states := sc.held, sc.hashes, sc.states
	order := sc.order
	lag := true // every limit tolerates the clock's lag
	for i := range checks {
		lr := s.limits.find(&checks[i].Limit)
		if lr == nil || lr.kind == kindLog {
			return 0, false
		}
		lag = lag && s.clock.tolerates(&checks[i].Limit)
		h := &held[i]
		h.lr, h.kind, h.ref, h.lead = lr, lr.kind, lr.ref, i
		for j := range i {
			if hashes[j] == hashes[i] {
				h.lead = held[j].lead
				break
			}
		}
		if h.lead != i {
			h.a, h.base = held[h.lead].a, held[h.lead].base
			continue
		}
		a := s.dir[sc.idx[i]].Load()
		base, ok := a.find(hashes[i])
		if !ok {
			return 0, false
		}
		h.a, h.base = a, base
		// The entries are taken in the order of their keys' hashes: two
		// calls never wait for each other in a cycle.
		order = insertInOrder(order, hashes, i)
	}
	for k, i := range order {
		h := &held[i]
		tag, ok := h.a.acquire(h.base, hashes[i])
		if !ok {
			releaseHeld(held, order[:k])
			return 0, false
		}
		h.tag = tag
	}
	for i := range checks {
		h := &held[i]
		if h.slot = h.a.slotOf(h.base, h.ref); h.slot == noSlot {
			releaseHeld(held, order)
			return 0, false
		}
	}
	now, lagged := s.clock.nowIf(lag)
	for i := range checks {
		held[i].lr.noteMode(&checks[i].Limit, now)
	}
	if !readHeld(held, states, s.liveAfter(now)) {
		releaseHeld(held, order)
		return 0, false
	}
	changed, err := sluice.DecideBatch(checks, states, now, out)
	if err == nil && lagged && refused(out) {
		now = s.clock.exact()
		if !readHeld(held, states, s.liveAfter(now)) {
			releaseHeld(held, order)
			return 0, false
		}
		changed, err = sluice.DecideBatch(checks, states, now, out)
	}
	if err != nil {
		releaseHeld(held, order)
		return 0, false
	}
	for i := range checks { // valid limits only, before a state counts their receipts
		held[i].lr.noteWindow(&checks[i].Limit)
	}
	blocked := !changed && blocking(checks, out)
	for i := range held {
		h := &held[i]
		secs := expSecs(expiry(now, &out[i]))
		switch {
		case changed:
			h.a.write(h.kind, h.slot, &states[i], secs)
		case h.gone || !outlives(blocked, &out[i]) || !h.a.raiseSecs(h.slot, secs):
			continue
		}
		// An entry expires no earlier than any of its states.
		if lead := &held[h.lead]; secs > tagSecs(lead.tag) {
			lead.tag = lead.tag&^expMask | secs<<expShift
		}
	}
	releaseHeld(held, order)
	return now, true
}

// readHeld reads the states of held, whose entries the caller holds: a
// state whose expiry (see expSecs) is not after after (see
// Store.liveAfter) is read as a fresh one, and marked gone. It reports
// false when such a state still counts something and its expiry is to be
// noted (see shard.noteExpired), under the shard's mutex, before a state
// built since can give a receipt: the call is then decided by
// applyLocked, which notes it and leaves it counting nothing (see
// shard.clearExpired) if it does not write it, so a key's call takes the
// mutex once per such expiry.
func readHeld(held []heldCheck, states []sluice.State, after int64) bool {
	for i := range held {
		h := &held[i]
		states[i] = sluice.State{}
		h.a.read(h.kind, h.slot, &states[i])
		if h.gone = secsExpiry(h.a.slotSecs(h.slot)) <= after; h.gone {
			if (states[i].A != 0 || states[i].B != 0) && expiryNoted(h.lr) {
				return false
			}
			states[i] = sluice.State{}
		}
	}
	return true
}

// insertInOrder adds i to order, indexes of checks on distinct keys sorted
// by their keys' hashes, moving it down past the indexes it goes before.
func insertInOrder(order []int, hashes []hash, i int) []int {
	order = append(order, i)
	for k := len(order) - 1; k > 0 && hashBefore(hashes[i], hashes[order[k-1]]); k-- {
		order[k], order[k-1] = order[k-1], i
	}
	return order
}

// hashBefore reports whether the entry of a is taken before that of b. A
// key has one entry in the store, so it orders every entry one way for
// every call.
func hashBefore(a, b hash) bool {
	if a.h1 != b.h1 {
		return a.h1 < b.h1
	}
	return a.h2 < b.h2
}

// releaseHeld releases the entries of order, with their leads' tags.
func releaseHeld(held []heldCheck, order []int) {
	for _, i := range order {
		held[i].a.release(held[i].base, held[i].tag)
	}
}
