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

// spendAll spends the whole quota of l (3 units) on key "u" through s.
func spendAll(t *testing.T, s sluice.Store, l sluice.Limit) {
	t.Helper()
	out := make([]sluice.Status, 1)
	for range 3 {
		if err := s.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l, Cost: 1}}, out); err != nil || !out[0].Allowed {
			t.Fatalf("spending the quota: %+v, %v", out[0], err)
		}
	}
}

// remaining peeks at key "u" under l through a store of its own on srv.
func remaining(t *testing.T, srv *redistest.Server, l sluice.Limit) int64 {
	t.Helper()
	out := make([]sluice.Status, 1)
	s := redis.New(srv.Client(t), redis.WithTimeout(time.Second))
	if err := s.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l}}, out); err != nil {
		t.Fatal(err)
	}
	return out[0].Remaining
}

// An operator's reset (Store.Reset, DELETE /v1/keys/{subject}) on a Redis
// full under noeviction, the setup docs/operations.md recommends, forgets
// the client's states, as a give-back whose first write deletes goes
// through: reset.lua has no shebang, and its first write is the DEL of
// the client's state, which Redis lets through when full (then the writes
// after it). The reset's announcement on sluice:resets, which Redis
// refuses, is left out by a store that leases none of the limits: every
// algorithm's reset goes through, of a state held or gone.
func TestAResetOnAFullRedisFreesTheClient(t *testing.T) {
	for _, l := range []sluice.Limit{sluice.PerMinute(3), sluice.TokenBucket(3, time.Minute),
		sluice.FixedWindow(3, time.Minute), sluice.SlidingCounter(3, time.Minute),
		sluice.SlidingLog(3, time.Minute), sluice.Concurrency(3, time.Minute)} {
		t.Run(l.Algorithm().String(), func(t *testing.T) {
			srv := redistest.Standalone(t)
			s := redis.New(srv.Client(t), redis.WithTimeout(time.Second))
			spendAll(t, s, l)
			srv.MustDo("CONFIG", "SET", "maxmemory-policy", "noeviction")
			srv.MustDo("CONFIG", "SET", "maxmemory", "1")
			// The first limit holds no state: the DEL of its key, gone, is
			// the run's first write all the same.
			n, err := s.Reset(context.Background(), "u", []sluice.Limit{sluice.PerSecond(3).Named("gone"), l})
			srv.MustDo("CONFIG", "SET", "maxmemory", "0")
			if err != nil || n != 1 {
				t.Errorf("a reset on a full Redis: %d, %v; want the client's one state forgotten", n, err)
			}
			if r := remaining(t, srv, l); r != 3 {
				t.Errorf("after the reset, Redis back with room: %d remaining, want the client's whole quota", r)
			}
		})
	}
}

// Open's store resets on a full Redis the limits it does not lease, as
// Store.Reset does. It does not reset those it leases: without the
// announcement, which Redis refuses, the other instances would spend the
// leases they took before the reset until those end, on top of the fresh
// state. The reset fails, having forgotten nothing.
func TestAResetOnAFullRedisOfALeasedLimitFails(t *testing.T) {
	l := sluice.FixedWindow(3, time.Minute).Named("fw")
	for _, lease := range []redis.LeaseMode{redis.LeaseOff, redis.LeaseAuto} {
		t.Run("lease "+lease.String(), func(t *testing.T) {
			srv := redistest.Standalone(t)
			g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeStandalone, Addrs: []string{srv.Addr},
				Timeout: time.Second, OnStoreError: failover.Deny, Lease: redis.LeaseOptions{Limits: map[string]redis.LeaseMode{"fw": lease}}},
				redis.WithBatching(0))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			spendAll(t, g, l)
			srv.MustDo("CONFIG", "SET", "maxmemory-policy", "noeviction")
			srv.MustDo("CONFIG", "SET", "maxmemory", "1")
			n, err := g.Reset(context.Background(), "u", []sluice.Limit{l})
			srv.MustDo("CONFIG", "SET", "maxmemory", "0")
			r := remaining(t, srv, l)
			switch {
			case lease == redis.LeaseOff && (err != nil || n != 1 || r != 3):
				t.Errorf("a reset on a full Redis: %d, %v, then %d remaining; want the client's one state forgotten", n, err, r)
			case lease == redis.LeaseAuto && (!errors.Is(err, sluice.ErrStoreUnavailable) || r != 0):
				t.Errorf("a reset of a leased limit on a full Redis: %d, %v, then %d remaining; want it refused, nothing forgotten", n, err, r)
			}
		})
	}
}
