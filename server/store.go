package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// OpenedStore is the store a configuration asks for, with what the server
// needs around it.
type OpenedStore struct {
	Store sluice.Store
	// Ready reports whether the store is reachable (see Options.Ready).
	Ready func(ctx context.Context) error
	// Close releases the store's resources.
	Close func() error
	// StoreDown reports whether the store is failing (nil for memory).
	StoreDown func() bool
	// Failover and Cache are the wrappers around a Redis store (nil for
	// memory): their counters become metrics.
	Failover *failover.Store
	Cache    *overlimit.Cache
	// Memory is the in-process store: the store itself, or the failover's
	// local store on Redis. Its counts become metrics.
	Memory *memory.Store
	// Losses reports what Redis forgot of what it had acknowledged (nil
	// for memory): its counts become metrics.
	Losses func() redis.Losses
	// Unrefunded counts the reservations of refused calls spanning Redis
	// Cluster slots that could not be refunded (redis.Guarded.Unrefunded;
	// nil for memory): a metric.
	Unrefunded func() int64
	// Evicting reports the Redis masters that may evict keys when full and
	// how many masters were read so far (redis.Guarded.Evicting); nil for
	// memory.
	Evicting func() (masters []string, seen int)
	// ClientCertificate returns the client certificate Redis's next
	// connection presents and why its files hold no valid pair, if they do
	// not (config.ClientTLS.Presented); nil for memory and without one.
	ClientCertificate func() (*tls.Certificate, error)
	// Leases is the quota leased from Redis (nil unless the store leases):
	// its counts become metrics, and a reload gives its units back.
	Leases *redis.Leased
}

// OpenStore builds the store cfg describes. The store outlives
// configuration reloads: a reload that changes the store section takes
// effect at the next start.
// Store failures are logged to log (slog.Default() when nil): a line when
// the circuit breaker opens, probes and closes.
func OpenStore(cfg *config.Config, log *slog.Logger, opts ...memory.Option) (*OpenedStore, error) {
	if log == nil {
		log = slog.Default()
	}
	switch cfg.Store.Type {
	case "", "memory":
		m := memory.New(append([]memory.Option{memory.WithMaxKeys(cfg.Store.MaxKeys)}, opts...)...)
		return &OpenedStore{Store: m, Ready: func(context.Context) error { return nil }, Close: m.Close, Memory: m}, nil
	case "redis":
		return openRedis(cfg, log, opts...)
	}
	return nil, fmt.Errorf("server: unknown store type %q", cfg.Store.Type)
}
