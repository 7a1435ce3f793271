package server_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// The Redis store section opens redis.Open's store: it decides on Redis,
// its wrappers are the server's metrics, Ready pings Redis; with Redis
// down the server does not start, saying what to do.
func TestOpenStoreRedis(t *testing.T) {
	rs := redistest.Standalone(t)
	parse := func(addr string) *config.Config {
		t.Helper()
		cfg, err := config.Parse("sluice.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\""+addr+"\"], timeout: 1s, on_store_error: deny, instances: 2}\n"+
			"plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: gcra, quantity: 5, window: 1m}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	opened, err := server.OpenStore(parse(rs.Addr), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := opened.Ready(ctx); err != nil {
		t.Errorf("Ready with Redis up: %v", err)
	}
	var d sluice.Decision
	checks := []sluice.Check{{Key: "u", Limit: sluice.PerMinute(3), Cost: 1}}
	if err := sluice.NewLimiter(opened.Store).Allow(ctx, checks, &d); err != nil || !d.Allowed {
		t.Errorf("Allow with Redis up: %+v, %v", d, err)
	}
	if keys, err := rs.Keys("sluice:*"); err != nil || len(keys) != 1 {
		t.Errorf("keys in Redis: %v, %v; want the check's state", keys, err)
	}
	if opened.Failover == nil || opened.Cache == nil || opened.Memory == nil || opened.StoreDown() {
		t.Errorf("opened: %+v, want the failover, the cache, the local store, Redis up", opened)
	}
	opened.Close()

	// Redis down at start-up: the server starts, not ready, and decides by
	// on_store_error (deny here) instead of refusing to start.
	rs.Kill()
	down, err := server.OpenStore(parse(rs.Addr), nil)
	if err != nil {
		t.Fatalf("OpenStore with Redis down: %v, want a store deciding by on_store_error", err)
	}
	defer down.Close()
	if err := down.Ready(ctx); !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Errorf("Ready with Redis down: %v, want ErrStoreUnavailable", err)
	}
	if err := sluice.NewLimiter(down.Store).Allow(ctx, checks, &d); err != nil || d.Allowed {
		t.Errorf("Allow with Redis down and on_store_error deny: %+v, %v, want a refusal", d, err)
	}
}
