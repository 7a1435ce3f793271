package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// Contract: a concurrency lease taken before a Reset of its key and limit
// is never given back out of the lease book the key builds since (Store.
// Release skips it), and every lease taken since is stamped after the
// reset, so that it can be given back: on Redis as on the memory store.
// Concurrency(3, 1m): three leases in one µs (stamps T, T+1, T+2, pushed
// ahead of the clock), a Reset at T+1, a lease from the fresh book, then
// the old lease T+1 given back: the fresh book keeps its lease, and three
// requests at most are in flight since the reset. With the clock stepping
// back (leases at T, T+10µs, T+20µs, the reset at T+10µs), the same.
func TestALeaseFromBeforeAResetNeverFreesOneTakenSince(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	for _, stepBack := range []bool{false, true} {
		t.Run(fmt.Sprintf("stepback=%v", stepBack), func(t *testing.T) { resetThenOldLease(t, client, stepBack) })
	}
}

func resetThenOldLease(t *testing.T, client rueidis.Client, stepBack bool) {
	ctx := context.Background()
	clock := conformance.NewClock(conformance.DefaultStart)
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	red := redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(10*time.Second))
	key := fmt.Sprintf("reset-lease-%d", time.Now().UnixNano())
	l := sluice.Concurrency(3, time.Minute).Named("inflight")
	one := []sluice.Check{{Key: key, Limit: l, Cost: 1}}

	type store interface {
		sluice.Store
		sluice.Releaser
	}
	run := func(name string, s store, reset func()) int {
		var before []int64
		for range 3 {
			st := make([]sluice.Status, 1)
			if err := s.Apply(ctx, one, st); err != nil || !st[0].Allowed {
				t.Fatalf("%s: acquire before reset: %v %+v", name, err, st[0])
			}
			before = append(before, st[0].Lease)
			if stepBack {
				clock.Advance(10 * time.Microsecond)
			}
		}
		if stepBack {
			clock.Advance(-20 * time.Microsecond) // back to T+10µs
		} else {
			clock.Advance(time.Microsecond)
		}
		reset()
		st := make([]sluice.Status, 1)
		if err := s.Apply(ctx, one, st); err != nil || !st[0].Allowed {
			t.Fatalf("%s: acquire after reset: %v %+v", name, err, st[0])
		}
		t.Logf("%s: leases before the reset %v, after it %d", name, before, st[0].Lease)
		// A request from before the reset finishes.
		if err := s.Release(ctx, one, []int64{before[1]}); err != nil {
			t.Fatal(err)
		}
		admitted := 1
		for range 4 {
			if err := s.Apply(ctx, one, st); err != nil {
				t.Fatal(err)
			}
			if st[0].Allowed {
				admitted++
			}
		}
		return admitted
	}
	m := run("memory", mem, func() { mem.Reset(key, []sluice.Limit{l}) })
	clock = conformance.NewClock(conformance.DefaultStart) // same instants for Redis
	red = redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(10*time.Second))
	r := run("redis", red, func() {
		if _, err := red.Reset(ctx, key, []sluice.Limit{l}); err != nil {
			t.Fatal(err)
		}
	})
	if m != 3 {
		t.Errorf("memory: %d requests in flight since the reset under a limit of 3", m)
	}
	if r != m {
		t.Errorf("redis: %d requests admitted and in flight since the reset under a concurrency limit of 3 (memory: %d): "+
			"giving back a lease taken before the reset freed the slot of one taken after it", r, m)
	}
}

// Contract: a lease taken after a Reset, even in the same µs as the reset
// and as a lease from before it, is given back by Release: the fresh book
// stamps it after the reset, which Release skips nothing after. With
// Concurrency(1, 1m) on a clock that stands still, a request takes the
// lease, the key is Reset, a request takes the fresh book's lease and gives
// it back, and the next one is admitted: on Redis as on the memory store.
func TestALeaseTakenSinceAResetIsGivenBack(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	l := sluice.Concurrency(1, time.Minute).Named("inflight")
	key := fmt.Sprintf("reset-lease-back-%d", time.Now().UnixNano())
	one := []sluice.Check{{Key: key, Limit: l, Cost: 1}}
	type store interface {
		sluice.Store
		sluice.Releaser
	}
	take := func(name string, s store) (int64, bool) {
		st := make([]sluice.Status, 1)
		if err := s.Apply(ctx, one, st); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return st[0].Lease, st[0].Allowed
	}
	clock := conformance.NewClock(conformance.DefaultStart) // stands still
	mem := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	red := redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(10*time.Second))
	stores := []struct {
		name  string
		s     store
		reset func()
	}{
		{"memory", mem, func() { mem.Reset(key, []sluice.Limit{l}) }},
		{"redis", red, func() {
			if _, err := red.Reset(ctx, key, []sluice.Limit{l}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range stores {
		old, ok := take(tc.name, tc.s)
		if !ok {
			t.Fatalf("%s: the first lease refused", tc.name)
		}
		tc.reset()
		lease, ok := take(tc.name, tc.s)
		if !ok {
			t.Fatalf("%s: the fresh book refused its first lease", tc.name)
		}
		if lease <= old {
			t.Errorf("%s: the lease taken since the reset stamped %d, not after the reset's %d", tc.name, lease, old)
		}
		if err := tc.s.Release(ctx, one, []int64{lease}); err != nil {
			t.Fatal(err)
		}
		if _, ok := take(tc.name, tc.s); !ok {
			t.Errorf("%s: the lease taken since the reset was not given back: its slot is still held", tc.name)
		}
	}
}
