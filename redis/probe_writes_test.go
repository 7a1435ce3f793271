package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// outOfMemory has s refuse writes as a Redis full under noeviction does
// (the setup docs/operations.md recommends).
func outOfMemory(s *redistest.Server) {
	s.MustDo("CONFIG", "SET", "maxmemory-policy", "noeviction")
	s.MustDo("CONFIG", "SET", "maxmemory", "1")
}

// probeWhileWritesFail opens a store on a fresh server, has every decision
// fail by breakWrites (Redis answers reads, refuses writes), and probes the
// open breaker idle after it opened. A probe asks as the next call on the
// node would: the next call fails, so the probe must not close the breaker
// (Stats.Breaker is the server's store_down, its gauge and the dashboard's
// breaker). A probe is a cost-0 peek, which writes nothing: apply.lua's
// shebang has Redis refuse it all the same.
func probeWhileWritesFail(t *testing.T, onErr failover.OnError, l sluice.Limit, idle time.Duration, breakWrites func(*redistest.Server)) {
	srv := redistest.Standalone(t)
	g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeStandalone, Addrs: []string{srv.Addr},
		Timeout: 500 * time.Millisecond, OnStoreError: onErr,
		Breaker: failover.BreakerOptions{Failures: 1, OpenFor: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	out := make([]sluice.Status, 1)
	apply := func() {
		t.Helper()
		if err := g.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l, Cost: 1}}, out); err != nil {
			t.Fatal(err)
		}
	}
	apply() // the key exists in Redis, as a client's key does
	breakWrites(srv)
	fo := g.Failover()
	apply()
	if st := fo.Stats(); st.FallbackDecisions != 1 || st.Breaker != failover.BreakerOpen {
		t.Fatalf("a call while Redis refuses writes: %+v, stats %+v; want a fallback that opens the breaker", out[0], st)
	}
	time.Sleep(idle)
	fo.Probe(context.Background())
	if st := fo.Stats(); st.Breaker == failover.BreakerClosed {
		t.Errorf("a probe closed the breaker while Redis refuses writes: stats %+v", st)
	}
	time.Sleep(40 * time.Millisecond)
	before := fo.Stats().StoreErrors
	apply()
	if fo.Stats().StoreErrors == before {
		t.Errorf("the call after the probe did not fail (%+v): Redis took its write", out[0])
	}
}

func TestAProbeOfARedisOutOfMemoryLeavesTheBreakerOpen(t *testing.T) {
	t.Run("deny", func(t *testing.T) {
		probeWhileWritesFail(t, failover.Deny, sluice.PerMinute(10), 40*time.Millisecond, outOfMemory)
	})
	t.Run("allow", func(t *testing.T) {
		probeWhileWritesFail(t, failover.Allow, sluice.PerMinute(10), 40*time.Millisecond, outOfMemory)
	})
	// Under local (the default), a probe first charges what the instance
	// admitted locally, a write that fails. An idle instance owes nothing
	// once its fallback's units have passed (10 a second: 100 ms a unit),
	// and its probe is the peek alone.
	t.Run("local, idle", func(t *testing.T) {
		probeWhileWritesFail(t, failover.Local, sluice.PerSecond(10), 500*time.Millisecond, outOfMemory)
	})
}

func TestAProbeOfARedisTurnedReplicaLeavesTheBreakerOpen(t *testing.T) {
	probeWhileWritesFail(t, failover.Deny, sluice.PerMinute(10), 40*time.Millisecond, func(s *redistest.Server) {
		s.MustDo("REPLICAOF", "127.0.0.1", "1") // a master demoted behind its address; nothing answers on port 1
	})
}

// A Redis out of memory refuses every decision, a peek (cost 0) included:
// the store cannot decide. The release of a concurrency slot, whose first
// write deletes the key's newest lease, still goes through and frees the
// slot.
func TestARedisOutOfMemoryRefusesAPeekAndTakesBackTheNewestLease(t *testing.T) {
	srv := redistest.Standalone(t)
	s := redis.New(srv.Client(t), redis.WithTimeout(time.Second))
	ctx := context.Background()
	conc := sluice.Concurrency(1, time.Minute)
	out := make([]sluice.Status, 1)
	if err := s.Apply(ctx, []sluice.Check{{Key: "c", Limit: conc, Cost: 1}}, out); err != nil || !out[0].Allowed {
		t.Fatalf("a first lease: %+v, %v", out[0], err)
	}
	lease := out[0].Lease
	outOfMemory(srv)
	for _, c := range []sluice.Check{{Key: "c", Limit: conc}, {Key: "d", Limit: conc, Cost: 1}} {
		if err := s.Apply(ctx, []sluice.Check{c}, out); !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("a check of cost %d on a full Redis: %+v, %v; want an error wrapping ErrStoreUnavailable", c.Cost, out[0], err)
		}
	}
	if err := s.Release(ctx, []sluice.Check{{Key: "c", Limit: conc, Cost: 1}}, []int64{lease}); err != nil {
		t.Errorf("the release of the lease on a full Redis: %v", err)
	}
	srv.MustDo("CONFIG", "SET", "maxmemory", "0")
	if err := s.Apply(ctx, []sluice.Check{{Key: "c", Limit: conc}}, out); err != nil || out[0].Remaining != 1 {
		t.Errorf("after the release: %+v, %v; want the slot free", out[0], err)
	}
}
