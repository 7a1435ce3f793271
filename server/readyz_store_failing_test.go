package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// /readyz's probe of the store is a PING (redis.Guarded.Ping), but a
// Redis that answers PING may refuse every decision — full under
// maxmemory-policy noeviction (OOM), a Cluster down (CLUSTERDOWN: PING is
// keyless and still answered), a replica (READONLY), writes not copied to
// the Replicas asked — has every decision made by on_store_error, and the
// circuit breaker open. Under on_store_error deny, which then refuses every
// request, the instance is not ready (docs/operations.md,
// SluiceStoreBreakerOpen), as when Redis is unreachable.
func TestReadyzIsNotReadyUnderDenyWhileRedisFailsEveryDecision(t *testing.T) {
	rs := redistest.Standalone(t)
	cfg, err := config.Parse("sluice.yaml", []byte("store:\n  type: redis\n  redis: {addresses: [\""+rs.Addr+"\"], timeout: 1s, on_store_error: deny}\n"+
		"plans:\n  free:\n    limits:\n      - {name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	ctx := context.Background()
	lim := sluice.NewLimiter(opened.Store)
	checks := []sluice.Check{{Key: "u", Limit: sluice.PerMinute(1000), Cost: 1}}
	var d sluice.Decision
	if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
		t.Fatalf("Allow with Redis up: %+v, %v", d, err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Memory: opened.Memory,
		Ready: opened.Ready, StoreDown: opened.StoreDown, Failover: opened.Failover, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	readyz := func() int {
		t.Helper()
		resp, err := http.Get("http://" + addrs.admin + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := readyz(); got != http.StatusOK {
		t.Fatalf("/readyz with Redis up: %d", got)
	}

	// Redis full: every script that writes is refused with OOM; PING is
	// still answered.
	rs.MustDo("CONFIG", "SET", "maxmemory-policy", "noeviction")
	rs.MustDo("CONFIG", "SET", "maxmemory", "1")
	t.Cleanup(func() { rs.MustDo("CONFIG", "SET", "maxmemory", "0") })
	refused := 0
	for i := 0; i < 20; i++ {
		if err := lim.Allow(ctx, []sluice.Check{{Key: "u" + string(rune('a'+i)), Limit: sluice.PerMinute(1000), Cost: 1}}, &d); err == nil && !d.Allowed {
			refused++
		}
	}
	if refused != 20 || !opened.StoreDown() {
		t.Fatalf("scenario not reached: %d of 20 fresh keys refused, breaker open %v", refused, opened.StoreDown())
	}
	time.Sleep(100 * time.Millisecond)
	if got := readyz(); got != http.StatusServiceUnavailable {
		t.Errorf("every decision refused by on_store_error deny (Redis answers each with an error, breaker open), yet /readyz answers %d, want 503", got)
	}
}
