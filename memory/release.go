package memory

import (
	"context"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: it gives back concurrency leases. It
// never fails, and ctx is not consulted (see Store): a lease is given back
// even for a request whose context is done.
func (s *Store) Release(_ context.Context, checks []sluice.Check, leases []int64) error {
	now := s.now()
	for i := range checks {
		c := &checks[i]
		if leases[i] == 0 || c.Limit.Algorithm() != sluice.AlgorithmConcurrency {
			continue
		}
		h := s.keyHash(c.Key)
		sh := &s.shards[s.shardIndex(h)]
		sh.mu.Lock()
		t := sh.table(&c.Limit, &s.judges)
		if slot, _, ok := t.hold(h); ok {
			var st sluice.State
			t.load(slot, h, &st)
			next := c.Limit.Release(st, leases[i], c.Cost)
			_, peek := c.Limit.Decide(next, now, 0)
			t.store(slot, h, &next, expiry(now, &peek))
			t.arr.es[slot].letGo()
		}
		sh.mu.Unlock()
	}
	return nil
}
