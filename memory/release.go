package memory

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: it gives back concurrency leases.
func (s *Store) Release(ctx context.Context, checks []sluice.Check, leases []int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory store: %w", err)
	}
	now := s.now()
	for i := range checks {
		c := &checks[i]
		if leases[i] == 0 || c.Limit.Algorithm() != sluice.AlgorithmConcurrency {
			continue
		}
		h := s.keyHash(c.Key)
		sh := &s.shards[s.shardIndex(h)]
		sh.mu.Lock()
		t := sh.table(&c.Limit)
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
