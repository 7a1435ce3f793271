package memory

import "github.com/sluice-dev/sluice"

// Reset forgets key's state under each of limits (one state per limit ID
// and algorithm), as if the key had never been seen: its next check finds
// the limit's full quota. It reports how many states it forgot; a state
// the store does not hold (never seen, expired, evicted) is not counted.
// Reset is safe for concurrent use with Apply: a decision that holds the
// key's entry finishes first, and one that comes after finds it gone.
func (s *Store) Reset(key string, limits []sluice.Limit) int {
	h := s.keyHash(key)
	sh := &s.shards[s.shardIndex(h)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	forgot := 0
	for i := range limits {
		t := sh.tables[tableKey{limits[i].ID(), limits[i].Algorithm()}]
		if t == nil {
			continue
		}
		slot, _, ok := t.hold(h)
		if !ok {
			continue
		}
		t.remove(slot)
		sh.keys--
		forgot++
	}
	return forgot
}
