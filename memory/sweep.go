package memory

import "time"

// Sweep forgets every state that has returned to full quota and gives the
// memory of mostly emptied tables back. It returns how many states it
// forgot. The background sweep calls it; calling it directly is safe.
func (s *Store) Sweep() int {
	now := s.now()
	removed := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k, t := range sh.tables {
			for key, slot := range t.index {
				if t.cell(slot).exp <= now {
					t.remove(key, slot)
					removed++
					sh.keys--
				}
			}
			switch {
			case len(t.index) == 0:
				delete(sh.tables, k)
				if sh.last == t {
					sh.last = nil
				}
			case t.peak >= 1024 && len(t.index) < t.peak/4:
				nt := t.rebuilt()
				sh.tables[k] = nt
				if sh.last == t {
					sh.last = nt
				}
			}
		}
		sh.mu.Unlock()
	}
	s.expirations.Add(int64(removed))
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
