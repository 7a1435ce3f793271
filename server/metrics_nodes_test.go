package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
	"github.com/sluice-dev/sluice/server"
)

// downStore fails every call for the keys of node "a", as a Cluster master
// that is down; node "b"'s keys are decided.
type downStore struct{ sluice.Store }

func (d downStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if strings.HasPrefix(checks[0].Key, "a") {
		return sluice.ErrStoreUnavailable
	}
	return d.Store.Apply(ctx, checks, out)
}

// Each node's breaker and counts are series of their own, labelled by
// node: a down node's show, a healthy node's stay at zero; and what Redis
// forgot is counted.
func TestNodeMetrics(t *testing.T) {
	primary, local := memory.New(), memory.New()
	t.Cleanup(func() { primary.Close(); local.Close() })
	f, err := failover.New(downStore{primary}, local, failover.Options{
		Node: func(c *sluice.Check) string { return c.Key[:1] }, Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.NewLimiter(f)
	var d sluice.Decision
	for i := range 20 {
		for _, key := range []string{"a1", "b1"} {
			err := lim.Allow(context.Background(), []sluice.Check{{Key: key, Limit: sluice.PerSecond(1000), Cost: 1}}, &d)
			if err != nil && !errors.Is(err, sluice.ErrStoreUnavailable) {
				t.Fatalf("call %d on %s: %v", i, key, err)
			}
		}
	}
	cfg, err := config.Parse("t.yaml", []byte("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if _, err := server.New(server.Options{Config: cfg, Store: f, Failover: f, Registry: reg,
		StoreLosses:     func() redis.Losses { return redis.Losses{LostWrites: 2, EmptyRestarts: 1, Evicted: 7} },
		StoreUnrefunded: func() int64 { return 3 }}); err != nil {
		t.Fatal(err)
	}
	got := gatheredSeries(t, reg)
	for series, want := range map[string]float64{
		`sluice_store_node_breaker_open{node="a"}`:             1,
		`sluice_store_node_breaker_open{node="b"}`:             0,
		`sluice_store_node_breaker_opens_total{node="b"}`:      0,
		`sluice_store_node_errors_total{node="b"}`:             0,
		`sluice_store_node_fallback_decisions_total{node="b"}`: 0,
		`sluice_redis_lost_writes_total`:                       2,
		`sluice_redis_empty_restarts_total`:                    1,
		`sluice_redis_evicted_keys_total`:                      7,
		`sluice_redis_unrefunded_total`:                        3,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (exported %v), want %v", series, v, ok, want)
		}
	}
	for _, series := range []string{`sluice_store_node_errors_total{node="a"}`, `sluice_store_node_fallback_decisions_total{node="a"}`,
		`sluice_store_node_breaker_opens_total{node="a"}`} {
		if got[series] < 1 {
			t.Errorf("%s = %v, want ≥ 1 for the down node", series, got[series])
		}
	}
}
