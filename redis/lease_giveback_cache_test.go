package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
)

// nowClock is a test clock that moves only when told, at the wall clock's
// time now (the scripts decide at Redis's).
func nowClock() *storetest.Clock {
	c := storetest.NewClock()
	c.Advance(time.Since(c.Now()))
	return c
}

// applyOne applies c to s and returns its status.
func applyOne(t *testing.T, s sluice.Store, c sluice.Check) sluice.Status {
	t.Helper()
	out := make([]sluice.Status, 1)
	if err := s.Apply(context.Background(), []sluice.Check{c}, out); err != nil {
		t.Fatal(err)
	}
	return out[0]
}

// Units a lease gives back to Redis (idle, ended, replaced, on Return or
// Close) are capacity coming back other than with time: Open's store
// makes its over-limit cache forget the refusals of their keys, so that
// the cache never refuses what Redis, given them back, admits.
//
// A fixed window of 10 an hour, one instance: the first call takes a lease
// of 5 (Redis: 4 left); another client spends 3 (1 left); a call of 6,
// beyond the lease, is decided by Redis and refused (the cache remembers
// it); the lease goes idle and its 5 units go back (6 left): a call of 6
// is admitted, where the cache refused it (Retry-After the rest of the
// hour).
func TestALeaseGivenBackEndsTheCachesRefusalsOfItsKey(t *testing.T) {
	srv := redistest.Standalone(t)
	clock := nowClock()
	g, err := redis.Open(context.Background(), redis.Options{
		Addrs: []string{srv.Addr}, Timeout: testTimeout, Instances: 1,
		Lease:     redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: 10 * time.Millisecond},
		OverLimit: overlimit.Options{Clock: clock.Now},
	}, redis.WithBatching(0), redis.WithTimeForTesting(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	other := redis.New(srv.Client(t), redis.WithTimeout(testTimeout), redis.WithTimeForTesting(clock.Now))

	c := sluice.Check{Key: "giveback-cache", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}
	left := func() int64 {
		p := c
		p.Cost = 0
		return applyOne(t, other, p).Remaining
	}
	if st := applyOne(t, g, c); !st.Allowed {
		t.Fatalf("first call refused: %+v", st)
	}
	held := g.Leases().Stats().Held
	if held == 0 {
		t.Fatalf("no lease taken by the first call: %+v", g.Leases().Stats())
	}
	spend := c
	spend.Cost = left() - 1 // another client spends all but one unit
	if st := applyOne(t, other, spend); !st.Allowed {
		t.Fatalf("the other client's spend refused: %+v", st)
	}
	big := c
	big.Cost = held + 1 // beyond the lease: decided by Redis
	if st := applyOne(t, g, big); st.Allowed {
		t.Fatalf("a call of %d admitted with 1 left in Redis: %+v", big.Cost, st)
	}

	clock.Advance(50 * time.Millisecond) // the lease goes idle: its units go back
	deadline := time.Now().Add(10 * time.Second)
	for g.Leases().Stats().Returned < held {
		if time.Now().After(deadline) {
			t.Fatalf("idle lease not given back: %+v", g.Leases().Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := left(); l < big.Cost {
		t.Fatalf("after the give-back Redis has %d left, want at least %d", l, big.Cost)
	}
	saved := g.Cache().Stats().RoundTripsSaved
	if st := applyOne(t, g, big); !st.Allowed {
		t.Errorf("a call of %d refused although Redis has %d left (by the cache: %v, RetryAfter %v)",
			big.Cost, left(), g.Cache().Stats().RoundTripsSaved > saved, st.RetryAfter)
	}
}
