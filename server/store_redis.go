package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// openRedis builds the Redis store with redis.Open: Redis with a per-call
// timeout, an over-limit cache right around it (a client that keeps
// knocking is refused without a round trip), inside a failover that applies
// on_store_error with a circuit breaker, falling back to a local memory
// store with each quota divided by the instance count. A password file is
// read again for each new connection to Redis. The server starts
// while Redis cannot be reached: it decides by on_store_error, /readyz says
// so (not ready under deny), a warning says so, and Redis takes over when
// it comes.
// openTimeout bounds the first attempt to reach Redis at start-up.
const openTimeout = 5 * time.Second

func openRedis(cfg *config.Config, log *slog.Logger, opts ...memory.Option) (*OpenedStore, error) {
	r := cfg.Store.Redis
	policy, err := failover.ParseOnError(r.OnStoreError)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	lease, err := leaseOptions(r)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	o := redis.Options{Mode: redis.Mode(r.Mode), Addrs: r.Addresses,
		MasterSet: r.MasterName, Username: r.Username, Password: r.Password, DB: r.DB, Timeout: r.Timeout,
		SentinelUsername: r.SentinelUsername, SentinelPassword: r.SentinelPassword,
		OnStoreError: policy, Instances: r.Instances, Replicas: r.Replicas, ReplicaWait: r.ReplicaWait,
		Lease: lease, Logger: log}
	if o.TLS, err = r.TLS.Load(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if r.TLS.CAFile != "" {
		o.TLSRoots = r.TLS.Roots // a CA rotated on disk is trusted from the next connection on
	}
	if r.PasswordFile != "" {
		if o.Password, err = config.ReadSecret(r.PasswordFile); err != nil {
			return nil, fmt.Errorf("server: redis password: %w", err)
		}
		o.Credentials = func() (string, string, error) {
			password, err := config.ReadSecret(r.PasswordFile)
			return r.Username, password, err
		}
	}
	if r.SentinelPasswordFile != "" {
		if o.SentinelPassword, err = config.ReadSecret(r.SentinelPasswordFile); err != nil {
			return nil, fmt.Errorf("server: the Sentinels' password: %w", err)
		}
	}
	local := memory.New(append([]memory.Option{memory.WithMaxKeys(cfg.Store.MaxKeys)}, opts...)...)
	o.Local = local
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	st, err := redis.Open(ctx, o)
	if err != nil {
		local.Close()
		return nil, fmt.Errorf("server: %w", err)
	}
	fo := st.Failover()
	return &OpenedStore{
		Store: st,
		Ready: st.Ping,
		Close: func() error {
			st.Close()
			local.Close()
			return nil
		},
		StoreDown:         func() bool { return fo.Stats().Breaker != failover.BreakerClosed },
		Failover:          fo,
		Cache:             st.Cache(),
		Memory:            local,
		Losses:            st.Losses,
		Unrefunded:        st.Unrefunded,
		Evicting:          st.Evicting,
		Leases:            st.Leases(),
		ClientCertificate: func() (*tls.Certificate, error) { return r.TLS.Presented(o.TLS) },
	}, nil
}

// storeLeased returns which limits, by ID, a store of settings r leases
// (lease: auto, its own or leases:'s), and the longest life of its leases
// (httplimit.Options.StoreLeased, StoreLeaseMaxAge).
func storeLeased(r config.Redis) (leased func(id string) bool, maxAge time.Duration) {
	return func(id string) bool {
		mode, ok := r.Leases[id]
		if !ok {
			mode = r.Lease
		}
		m, err := redis.ParseLeaseMode(mode)
		return err == nil && m == redis.LeaseAuto
	}, r.LeaseMaxAge
}

// leaseOptions reads the store's lease settings (redis.LeaseOptions).
func leaseOptions(r config.Redis) (redis.LeaseOptions, error) {
	mode, err := redis.ParseLeaseMode(r.Lease)
	if err != nil {
		return redis.LeaseOptions{}, err
	}
	o := redis.LeaseOptions{Mode: mode, MaxUnits: r.LeaseMaxUnits, MaxAge: r.LeaseMaxAge}
	for id, m := range r.Leases {
		if o.Limits == nil {
			o.Limits = map[string]redis.LeaseMode{}
		}
		if o.Limits[id], err = redis.ParseLeaseMode(m); err != nil {
			return redis.LeaseOptions{}, fmt.Errorf("limit %s: %w", id, err)
		}
	}
	return o, nil
}
