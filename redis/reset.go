package redis

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
)

// Reset forgets key's states under limits, as if key had never been seen
// by them: one DEL of their Redis keys per Cluster slot (one in all when
// they share key's hash slot, as they do unless key starts with "}"), sent
// at once and bounded by the store's timeout. It reports how many of them
// Redis held. An error wraps sluice.ErrStoreUnavailable; nothing is then
// known to be forgotten.
func (s *Store) Reset(ctx context.Context, key string, limits []sluice.Limit) (int, error) {
	if len(limits) == 0 {
		return 0, nil
	}
	if err := s.unusable("reset"); err != nil {
		return 0, err
	}
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = Key(key, l.ID())
	}
	ctx, cancel := s.bounded(ctx)
	defer cancel()
	groups := s.groups(keys)
	cmds := make([]rueidis.Completed, len(groups))
	for j, idx := range groups {
		gk := make([]string, len(idx))
		for k, i := range idx {
			gk[k] = keys[i]
		}
		cmds[j] = s.client.B().Del().Key(gk...).Build()
	}
	total := 0
	for _, r := range s.client.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return 0, s.fail("reset", err)
		}
		total += int(n)
	}
	return total, nil
}

// Reset forgets key's states under limits in Redis (Store.Reset), then in
// the over-limit cache, the local fallback and the failover (what Redis
// last said of key, and what the fallback admitted and has not charged
// to Redis: failover.Store.Forget), so that none of them answers for Redis
// with the old state. It reports how many states Redis held. Units
// this or another instance has already leased stay spent until their lease
// ends. An error wraps sluice.ErrStoreUnavailable (Redis could not be
// reached); the cache and the fallback forget key either way.
func (g *Guarded) Reset(ctx context.Context, key string, limits []sluice.Limit) (int, error) {
	if g.failover == nil {
		return 0, errNoStore()
	}
	defer func() {
		g.cache.Invalidate(key)
		g.local.Reset(key, limits)
		g.failover.Forget(key, limits)
	}()
	s, err := g.redis.store()
	if err != nil {
		return 0, fmt.Errorf("reset: %w", err)
	}
	return s.Reset(ctx, key, limits)
}
