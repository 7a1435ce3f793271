package redis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// The store a service runs refunds through its over-limit cache and
// failover to Redis; with leased quota it refuses to refund at all.
func TestOpenRefunds(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	g, err := redis.Open(ctx, redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout, MustConnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	lim := sluice.NewLimiter(g)
	checks := []sluice.Check{{Key: "k", Limit: sluice.SlidingCounter(2, time.Hour), Cost: 1}}
	var d sluice.Decision
	for i := range 5 {
		if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
			t.Fatalf("call %d: %+v, %v; want admitted, every earlier one refunded", i, d, err)
		}
		if err := lim.Refund(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
	}

	leased := openLeased(t, srv, redis.Options{})
	lim = sluice.NewLimiter(leased)
	slog := []sluice.Check{{Key: "k", Limit: sluice.SlidingLog(2, time.Hour), Cost: 1}}
	if err := lim.Allow(ctx, slog, &d); err != nil || !d.Allowed {
		t.Fatalf("%+v, %v", d, err)
	}
	if err := lim.Refund(ctx, slog, &d); err == nil || !strings.Contains(err.Error(), "leased quota") {
		t.Errorf("refund with leases: %v, want it refused", err)
	}
}
