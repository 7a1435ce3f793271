package server

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/redis"
)

// resetRedis forgets key's states of limits in the Redis store cfg names:
// one DEL of their keys (one hash slot: they share the subject's tag), on a
// client opened for the reset and closed after it, since resets are rare;
// then the over-limit cache and the local fallback forget them too, so that
// neither answers for Redis with the old state. It reports how many keys
// Redis held. Units an instance has leased stay spent until they expire.
func (s *Server) resetRedis(ctx context.Context, cfg *config.Config, key string, limits []sluice.Limit) (int, error) {
	r := cfg.Store.Redis
	co, err := redis.Options{Mode: redis.Mode(r.Mode), Addrs: r.Addresses, MasterSet: r.MasterName,
		Username: r.Username, Password: r.Password, DB: r.DB, Timeout: r.Timeout}.ClientOption()
	if err != nil {
		return 0, err
	}
	client, err := rueidis.NewClient(co)
	if err != nil {
		return 0, fmt.Errorf("%w: reset: %w", sluice.ErrStoreUnavailable, err)
	}
	defer client.Close()
	keys := make([]string, len(limits))
	for i, l := range limits {
		keys[i] = redis.Key(key, l.ID())
	}
	n, err := client.Do(ctx, client.B().Del().Key(keys...).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("%w: reset: %w", sluice.ErrStoreUnavailable, err)
	}
	if s.opts.OverLimit != nil {
		s.opts.OverLimit.Invalidate(key)
	}
	if s.opts.Memory != nil {
		s.opts.Memory.Reset(key, limits)
	}
	return int(n), nil
}
