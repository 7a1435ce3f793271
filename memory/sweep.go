package memory

import "time"

// Sweep forgets every state that has returned to full quota (a state's
// expiry is kept in whole seconds, rounded up, so up to a second after it
// did) and gives the memory of mostly emptied tables back. It returns how many states it
// forgot. The background sweep calls it; calling it directly is safe.
func (s *Store) Sweep() int {
	now := s.now()
	removed := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		removed += sh.sweep(now, true)
		sh.mu.Unlock()
	}
	s.expirations.Add(int64(removed))
	return removed
}

// sweep forgets the shard's expired states and returns how many; the caller
// holds sh.mu and counts them. With compact it also drops empty tables and
// rebuilds mostly emptied ones; without, every table pointer stays valid (an
// insert in progress holds some).
func (sh *shard) sweep(now int64, compact bool) int {
	removed := 0
	sh.swept, sh.soonest = now, 1<<62
	for k, t := range sh.tables {
		es := t.entries()
		for i := 0; i < len(es); {
			e := &es[i]
			if e.h1.Load() == 0 {
				i++
				continue
			}
			if exp := expiryOf(e.tag.Load()); exp > now {
				sh.soonest = min(sh.soonest, exp)
				i++
				continue
			}
			e.hold()
			if exp := expiryOf(e.tag.Load()); exp > now { // a decision moved it on
				sh.soonest = min(sh.soonest, exp)
				e.letGo()
				i++
				continue
			}
			t.remove(i) // a later entry may shift into i: look again
			removed++
			sh.keys--
		}
		switch {
		case !compact:
		case t.n == 0:
			delete(sh.tables, k)
			sh.drop(t)
			for i, r := range sh.recent {
				if r == t {
					sh.recent[i] = nil // a table out of the map must not take new keys
				}
			}
		default:
			if t.compact() {
				sh.list()
			}
		}
	}
	return removed
}

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
