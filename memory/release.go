package memory

import (
	"context"
	"fmt"

	"github.com/sluice-dev/sluice"
)

// Release implements sluice.Releaser: it gives back concurrency leases.
// ctx is not consulted (see Store): a lease is given back even for a
// request whose context is done. A lease taken before a Reset of its key
// and limit is not given back out of the lease book built since, which
// never held it (see Reset), nor out of a book past its expiry, which the
// store no longer holds (see the package doc). It fails when leases is not
// as long as checks, and when a check with a lease to give back has a
// limit that cannot be decided (Limit.Err), with an error wrapping
// sluice.ErrInvalidCheck, and then gives back nothing.
func (s *Store) Release(_ context.Context, checks []sluice.Check, leases []int64) error {
	if s.zero() {
		return errZero()
	}
	if len(leases) != len(checks) {
		return fmt.Errorf("%w: %d checks with %d leases", sluice.ErrInvalidCheck, len(checks), len(leases))
	}
	for i := range checks {
		c := &checks[i]
		if leases[i] == 0 || c.Limit.Algorithm() != sluice.AlgorithmConcurrency {
			continue
		}
		if err := c.Limit.Err(); err != nil {
			return fmt.Errorf("memory: release: check %d: %w: %w", i, sluice.ErrInvalidCheck, err)
		}
	}
	now := s.now()
	for i := range checks {
		c := &checks[i]
		if leases[i] == 0 || c.Limit.Algorithm() != sluice.AlgorithmConcurrency {
			continue
		}
		s.update(c, now, func(st sluice.State, reset int64, noted bool) sluice.State {
			if noted && leases[i] <= reset {
				return st // the book since the reset never held it
			}
			return c.Limit.Release(st, leases[i], c.Cost)
		})
	}
	return nil
}

// update replaces the state the store holds for c's key under c.Limit, if
// it holds one, with next of it and of the time of its last Reset the
// shard remembers, with noted true, or of noted false when it remembers
// none (see shard.resetAt), under the key's shard's mutex, with the expiry
// a peek at now gives the new state, or the one the state had when that is
// later: c.Limit may be one a reload has since replaced (a request decided
// before the reload, released or settled after it), whose shorter window
// would have Sweep forget a state the limit in force still counts. A
// sliding log or lease book next empties is forgotten, as a key never
// seen. It reports whether it held one: a state past its expiry is none
// (see Store.liveAfter), and is left as it is. A c.Limit the store has not
// registered, or one that cannot be decided, replaces nothing.
func (s *Store) update(c *sluice.Check, now int64, next func(st sluice.State, reset int64, noted bool) sluice.State) bool {
	h := s.keyHash(c.Key)
	sh := &s.shards[s.shardIndex(h)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	lr := s.limits.find(&c.Limit)
	if lr == nil {
		return false
	}
	p, taken, ok := sh.locate(h, lr)
	if !ok {
		return false
	}
	held := sh.expiryAt(p, h, lr)
	if held <= s.liveAfter(now) {
		if taken {
			sh.arr.letGo(p.base)
		}
		return false
	}
	var st sluice.State
	sh.load(s, p, h, lr, &st)
	reset, noted := sh.resetAt(h, lr, now)
	st = next(st, reset, noted)
	if lr.kind == kindLog && len(st.Log) == 0 {
		if taken {
			sh.arr.letGo(p.base)
		}
		sh.forget(h, lr)
		return true
	}
	if _, peek, err := c.Limit.Decide(st, now, 0); err == nil {
		sh.store(p, h, lr, &st, max(expiry(now, &peek), held), false)
	}
	if taken {
		sh.arr.letGo(p.base)
	}
	return true
}
