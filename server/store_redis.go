package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// openRedis builds the Redis store the way production wants it: Redis with
// a per-call timeout, an over-limit cache right around it (a client that
// keeps knocking is refused without a round trip), inside a failover that
// applies on_store_error with a circuit breaker, falling back to a local
// memory store with each quota divided by the instance count.
func openRedis(cfg *config.Config, log *slog.Logger, opts ...memory.Option) (*OpenedStore, error) {
	r := cfg.Store.Redis
	client, err := redis.NewClient(redis.Options{Mode: redis.Mode(r.Mode), Addrs: r.Addresses, MasterSet: r.MasterName,
		Username: r.Username, Password: r.Password, DB: r.DB, Timeout: r.Timeout})
	if err != nil {
		return nil, fmt.Errorf("server: %w (start Redis, or use store.type: memory)", err)
	}
	// The Redis store bounds every call by r.Timeout itself (none when it
	// is negative), and the failover sets no deadline of its own: on
	// standalone and Sentinel the store's batched calls share one timer per
	// script run (a call waits at most for the run ahead of it and its own,
	// each within the timeout), where the failover's context.WithTimeout per
	// decision cost about a tenth of the client's CPU under load.
	timeout := r.Timeout
	if timeout == 0 {
		timeout = failover.DefaultTimeout
	}
	primary := redis.New(client, redis.WithTimeout(timeout))
	cache := overlimit.New(primary, overlimit.Options{})
	policy, err := failover.ParsePolicy(r.OnStoreError)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	local := memory.New(append([]memory.Option{memory.WithMaxKeys(cfg.Store.MaxKeys)}, opts...)...)
	fo, err := failover.New(cache, local, failover.Options{Policy: policy, Timeout: -1, Instances: r.Instances,
		Breaker: failover.BreakerOptions{OnStateChange: func(from, to failover.BreakerState) {
			switch to {
			case failover.BreakerOpen:
				log.Warn("redis store failing: circuit open, deciding by on_store_error", "policy", r.OnStoreError, "from", from.String())
			case failover.BreakerClosed:
				log.Info("redis store recovered: circuit closed, deciding on Redis again")
			}
		}}})
	if err != nil {
		local.Close()
		client.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	return &OpenedStore{
		Store: fo,
		Ready: func(ctx context.Context) error {
			return client.Do(ctx, client.B().Ping().Build()).Error()
		},
		Close: func() error {
			local.Close()
			client.Close()
			return nil
		},
		StoreDown: func() bool { return fo.Stats().Breaker != failover.BreakerClosed },
		Failover:  fo,
		Cache:     cache,
		Memory:    local,
	}, nil
}
