package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// The store a service runs refunds through its over-limit cache and
// failover to Redis.
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

	// With leases, a unit spent from a lease has no receipt and stays
	// spent (less given back, never more); a sliding log, never leased,
	// is refunded.
	leased := openLeased(t, srv, redis.Options{})
	lim = sluice.NewLimiter(leased)
	window := []sluice.Check{{Key: "leased", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}}
	for range 3 {
		if err := lim.Allow(ctx, window, &d); err != nil || !d.Allowed {
			t.Fatalf("%+v, %v", d, err)
		}
		if err := lim.Refund(ctx, window, &d); err != nil {
			t.Fatal(err)
		}
	}
	if d.Statuses[0].Charged != 0 {
		t.Errorf("a unit spent from a lease has receipt %d, want none", d.Statuses[0].Charged)
	}
	slog := []sluice.Check{{Key: "leased", Limit: sluice.SlidingLog(2, time.Hour), Cost: 1}}
	for i := range 4 {
		if err := lim.Allow(ctx, slog, &d); err != nil || !d.Allowed {
			t.Fatalf("sliding log, call %d: %+v, %v; want admitted, every earlier one refunded", i, d, err)
		}
		if err := lim.Refund(ctx, slog, &d); err != nil {
			t.Fatal(err)
		}
	}
}
