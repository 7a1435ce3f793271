package redis_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A Redis that evicts when full is named at connection, and the keys it
// evicts are counted (Guarded.Losses) and logged: each evicted state gives
// its client a fresh quota. A Redis that never evicts is not warned about.
func TestOpenSeesARedisThatEvicts(t *testing.T) {
	quiet := redistest.Standalone(t)
	var logs realtest.Buffer
	// The tests' timeout, which bounds the dial too: 50 ms may not do on
	// a loaded machine.
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{quiet.Addr}, OnStoreError: failover.Deny, Timeout: testTimeout,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), MustConnect: true})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a few reads of the deployment
	if masters, seen := g.Evicting(); len(masters) != 0 || seen != 1 {
		t.Errorf("Evicting of a Redis without maxmemory: %v, %d seen", masters, seen)
	}
	g.Close()
	if strings.Contains(logs.String(), "evict") {
		t.Errorf("warned about a Redis without maxmemory:\n%s", logs.String())
	}

	rs := redistest.Standalone(t)
	rs.MustDo("CONFIG", "SET", "maxmemory", "2mb")
	rs.MustDo("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	logs = realtest.Buffer{}
	// The tests' timeout: a call the default 50 ms would time out on a
	// loaded machine writes nothing, and opens the breaker on the rest.
	g, err = redis.Open(context.Background(), redis.Options{Addrs: []string{rs.Addr}, OnStoreError: failover.Deny, Timeout: testTimeout,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), MustConnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitFor(t, func() bool { return strings.Contains(logs.String(), "redis may evict") })
	if !strings.Contains(logs.String(), "maxmemory_policy=allkeys-lru") {
		t.Errorf("the warning does not name the policy:\n%s", logs.String())
	}
	if masters, _ := g.Evicting(); len(masters) != 1 || masters[0] != rs.Addr+" (maxmemory-policy allkeys-lru, maxmemory 2097152 bytes)" {
		t.Errorf("Evicting: %q", masters)
	}
	// Fill it: 16,000 states of about 250 bytes are more than 2 MB.
	lim := sluice.NewLimiter(g)
	var d sluice.Decision
	for i := range 16000 {
		checks := []sluice.Check{{Key: fmt.Sprintf("key:%064d", i), Limit: sluice.PerHour(100), Cost: 1}}
		if err := lim.Allow(context.Background(), checks, &d); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return g.Losses().Evicted > 0 })
	waitFor(t, func() bool { return strings.Contains(logs.String(), "redis evicted keys to make room") })
	if n := g.Losses().Evicted; n < 1000 {
		t.Errorf("%d evictions counted, want thousands", n)
	}
}

// waitFor fails t unless ok becomes true within 10 s.
func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not within 10 s")
		}
	}
}
