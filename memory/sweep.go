package memory

import (
	"sync/atomic"
	"time"
)

// Sweep forgets every state that has returned to full quota (under the
// limit that wrote it, or a later one that refused a call reading it; a
// state's expiry is kept in whole seconds, rounded up, so up to a second
// after it did), and every key left with no state, and gives the memory
// of mostly emptied shards back. It returns how many states it forgot.
// The background sweep calls it; calling it directly is safe.
func (s *Store) Sweep() int {
	if s.zero() {
		return 0
	}
	now := s.now()
	removed := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		removed += sh.sweep(s, now, true)
		sh.mu.Unlock()
	}
	return removed
}

// sweep forgets the shard's expired states, and the keys left without
// one, counts them as expired and returns how many states; the caller
// holds sh.mu. With compact it also moves a mostly emptied array, or one
// wider than its keys need, to a smaller one.
func (sh *shard) sweep(s *Store, now int64, compact bool) int {
	before := sh.keys
	sh.swept, sh.soonest = now, 1<<62
	a := sh.arr
	width := 1
	for base := 0; base < len(a.w); {
		if atomic.LoadUint64(&a.w[base]) == 0 {
			base += a.stride
			continue
		}
		a.hold(base)
		h := a.keyAt(base)
		sh.forgetExpired(s, base, h, now)
		if sh.states(base, h) == 0 {
			a.remove(base) // a later entry may shift into base: look again
			continue
		}
		width = max(width, a.slotsUsed(base))
		a.setSecs(base, sh.entrySecs(base, h))
		a.letGo(base)
		base += a.stride
	}
	if compact {
		if c := a.compacted(width); c != a {
			sh.publish(c)
		}
		sh.compactSide()
	}
	return before - sh.keys
}

// compactSide moves the side states to a new map when they have fallen to
// fewer than an eighth of the most the map has held (a map never gives
// its room back); the caller holds sh.mu.
func (sh *shard) compactSide() {
	if sh.sidePeak < shrinkMinSide || len(sh.side)*shrinkBelowOneIn >= sh.sidePeak {
		return
	}
	side := make(map[hash][]sideState, len(sh.side))
	for h, ss := range sh.side {
		side[h] = ss
	}
	sh.side, sh.sidePeak = side, len(side)
}

// shrinkMinSide is the fewest keys with side states a shard's map must
// have held to be moved to a smaller one (see compactSide).
const shrinkMinSide = 64

func (s *Store) sweepEvery(d time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.Sweep()
		}
	}
}
