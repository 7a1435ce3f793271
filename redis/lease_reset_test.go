package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A lease taken before a reset was counted by the state the reset forgot:
// its unspent units, given back afterwards, must not be taken out of the
// fresh state, which never counted them. Given back, they let the
// instances admit more than the limit after the reset.
func TestALeaseGivenBackAfterAResetDoesNotAddToTheFreshState(t *testing.T) {
	t.Parallel()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(100, 400*24*time.Hour).Named("fw"),
		sluice.SlidingCounter(100, 400*24*time.Hour).Named("sc"),
		sluice.TokenBucket(100, 400*24*time.Hour).Named("tb"),
	} {
		t.Run(limit.Name(), func(t *testing.T) {
			t.Parallel()
			_, a, b, c, before := leasesHeld(t, limit, "reset", "the reset")
			held := before.Held

			if _, err := b.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err != nil {
				t.Fatal(err)
			}
			admitted := spendN(t, b, c, 200)
			if err := a.Leases().Return(context.Background()); err != nil {
				t.Fatal(err)
			}
			// b's over-limit cache refuses the key by now: a asks Redis.
			admitted += spendN(t, a, c, 200)
			if max := int(limit.Burst()); admitted > max {
				t.Errorf("the instances admitted %d after the reset, for a limit of %d: a's lease of %d units, taken before it, was given back to the fresh state; a: %+v",
					admitted, max, held, a.Leases().Stats())
			}
		})
	}
}

// A lease taken after a reset was counted by the fresh state: its unspent
// units go back to it as any lease's do.
func TestALeaseTakenAfterAResetIsGivenBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	o := redis.Options{Instances: 2, OnStoreError: failover.Local,
		Lease: redis.LeaseOptions{MaxAge: time.Hour, Idle: time.Hour}}
	a, b := openLeased(t, srv, o), openLeased(t, srv, o)
	limit := sluice.FixedWindow(100, 400*24*time.Hour).Named("fw")
	c := sluice.Check{Key: "reset-then-take", Limit: limit, Cost: 1}
	spendN(t, b, c, 1)
	if _, err := a.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		spendN(t, a, c, 1)
		settled(t, a.Leases())
	}
	before := settled(t, a.Leases())
	if err := a.Leases().Return(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := a.Leases().Stats()
	if before.Held < 1 || after.Returned-before.Returned != before.Held {
		t.Errorf("returned %d of the %d units held from leases taken after the reset (lost %d)",
			after.Returned-before.Returned, before.Held, after.Lost-before.Lost)
	}
	if left := peek(t, srv, c); left != 100-10 {
		t.Errorf("the fresh state has %d left after 10 units spent, want 90", left)
	}
}

// The instance that resets a key ends the leases it holds of it: spent
// after the reset, their units, counted by the state it forgot, would be
// admitted on top of the fresh state's quota.
func TestAResetEndsTheResettingInstancesLeasesOfTheKey(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	a := openLeased(t, srv, redis.Options{Instances: 2, OnStoreError: failover.Local,
		Lease: redis.LeaseOptions{MaxAge: time.Hour, Idle: time.Hour}})
	limit := sluice.FixedWindow(100, 400*24*time.Hour).Named("fw")
	c := sluice.Check{Key: "reset-own", Limit: limit, Cost: 1}
	for range 10 {
		spendN(t, a, c, 1)
		settled(t, a.Leases())
	}
	held := settled(t, a.Leases()).Held
	if held < 5 {
		t.Fatalf("a holds %d units of lease before the reset, want a lease to end", held)
	}
	if _, err := a.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err != nil {
		t.Fatal(err)
	}
	if admitted := spendN(t, a, c, 200); admitted > 100 {
		t.Errorf("admitted %d after the reset, for a limit of 100: the %d units of lease held before it were spent on top; leases %+v",
			admitted, held, a.Leases().Stats())
	}
}

// On a Cluster the give-back reads the reset key in its state's slot: a
// lease taken before a reset is not given back to the fresh state there
// either, for a plain subject as for one that starts with "}" (see Key).
func TestALeaseGivenBackAfterAResetOnACluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t)
	open := func() *redis.Guarded {
		g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeCluster, Addrs: cl.Addrs(),
			Timeout: testTimeout, Instances: 2, OnStoreError: failover.Local,
			Lease: redis.LeaseOptions{Mode: redis.LeaseAuto, MaxAge: time.Hour, Idle: time.Hour}}, redis.WithBatching(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	a, b := open(), open()
	limit := sluice.FixedWindow(100, 400*24*time.Hour).Named("fw")
	for _, key := range []string{"tagged", "}untagged"} {
		c := sluice.Check{Key: key, Limit: limit, Cost: 1}
		for range 10 {
			spendN(t, a, c, 1)
			settled(t, a.Leases())
		}
		before := settled(t, a.Leases())
		if before.Held < 5 {
			t.Fatalf("%s: a holds %d units of lease before the reset", key, before.Held)
		}
		if _, err := b.Reset(context.Background(), key, []sluice.Limit{limit}); err != nil {
			t.Fatal(err)
		}
		if err := a.Leases().Return(context.Background()); err != nil {
			t.Fatal(err)
		}
		after := a.Leases().Stats()
		if after.Returned != before.Returned || after.Lost-before.Lost != before.Held {
			t.Errorf("%s: %d units returned and %d lost of the %d held before the reset, want all lost",
				key, after.Returned-before.Returned, after.Lost-before.Lost, before.Held)
		}
	}
}

// Another instance's leases taken before a reset end once its watch reads
// the reset's notice (within a watch period): spent after the reset, their
// units, counted by the state it forgot, would be admitted on top of the
// fresh state's quota (112 of a limit of 100, with 13 held).
func TestAResetEndsOtherInstancesLeasesOfTheKey(t *testing.T) {
	t.Parallel()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(100, 400*24*time.Hour).Named("fw"),
		sluice.SlidingCounter(100, 400*24*time.Hour).Named("sc"),
		sluice.TokenBucket(100, 400*24*time.Hour).Named("tb"),
	} {
		t.Run(limit.Name(), func(t *testing.T) {
			t.Parallel()
			_, a, b, c, before := leasesHeld(t, limit, "reset-others", "the reset")
			if _, err := b.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return a.Leases().Stats().Lost-before.Lost >= before.Held })
			admitted := 0
			for range 300 {
				admitted += spendN(t, a, c, 1) + spendN(t, b, c, 1)
				settled(t, a.Leases())
				settled(t, b.Leases())
			}
			if admitted > 100 {
				t.Errorf("the instances admitted %d after the reset, for a limit of 100: a's %d units of lease, taken before it, were spent on top",
					admitted, before.Held)
			}
		})
	}
}

// On a Cluster the notice of a reset lives in a slot of its own, apart
// from the subject's: another instance ends its leases of the key there
// too.
func TestAResetEndsOtherInstancesLeasesOnACluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t)
	open := func() *redis.Guarded {
		g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeCluster, Addrs: cl.Addrs(),
			Timeout: testTimeout, Instances: 2, OnStoreError: failover.Local,
			Lease: redis.LeaseOptions{Mode: redis.LeaseAuto, MaxAge: time.Hour, Idle: time.Hour}}, redis.WithBatching(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	a, b := open(), open()
	limit := sluice.FixedWindow(100, 400*24*time.Hour).Named("fw")
	c := sluice.Check{Key: "reset-others-cluster", Limit: limit, Cost: 1}
	for range 10 {
		spendN(t, a, c, 1)
		settled(t, a.Leases())
	}
	before := settled(t, a.Leases())
	if before.Held < 5 {
		t.Fatalf("a holds %d units of lease before the reset", before.Held)
	}
	if _, err := b.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return a.Leases().Stats().Lost-before.Lost >= before.Held })
	if held := settled(t, a.Leases()).Held; held != 0 {
		t.Errorf("a still holds %d units of lease after reading the reset", held)
	}
}

// A lease taken from the fresh state right after another instance's reset
// was counted by that state: the reset's notice, which the watch reads up
// to a watch period later, must not end it. Ended, its units are neither
// spent nor given back, and the fleet admits fewer than the limit.
func TestALeaseTakenAfterAnotherInstancesResetSurvivesItsNotice(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	o := redis.Options{Instances: 2, OnStoreError: failover.Local,
		Lease: redis.LeaseOptions{MaxAge: time.Hour, Idle: time.Hour}}
	a, b := openLeased(t, srv, o), openLeased(t, srv, o)
	limit := sluice.FixedWindow(100, 400*24*time.Hour).Named("fw")
	c := sluice.Check{Key: "reset-then-others-take", Limit: limit, Cost: 1}
	for range 10 {
		spendN(t, b, c, 1)
		settled(t, b.Leases())
	}
	if _, err := b.Reset(context.Background(), c.Key, []sluice.Limit{limit}); err != nil {
		t.Fatal(err)
	}
	admitted := spendN(t, a, c, 1) // a's first call of the key takes a lease from the fresh state
	before := settled(t, a.Leases())
	if before.Held < 1 {
		t.Fatalf("a holds no lease after its first call: %+v", before)
	}
	time.Sleep(5 * 100 * time.Millisecond) // a's watch reads the notice
	if after := a.Leases().Stats(); after.Lost != before.Lost || after.Held != before.Held {
		t.Errorf("a held %d units of a lease taken after the reset, and %d once its watch read the notice (%d lost)",
			before.Held, after.Held, after.Lost-before.Lost)
	}
	for range 300 {
		n := spendN(t, a, c, 1) + spendN(t, b, c, 1)
		settled(t, a.Leases())
		settled(t, b.Leases())
		if n == 0 {
			break
		}
		admitted += n
	}
	if admitted != 100 {
		t.Errorf("the instances admitted %d after the reset until both refused, for a limit of 100; a: %+v, b: %+v",
			admitted, a.Leases().Stats(), b.Leases().Stats())
	}
}

// An announcement of a reset that no confirmation follows (its Reset could
// not append one, or an instance of an earlier version reset) still ends
// the other instances' leases of the key, once its confirmation is overdue
// (the larger of their timeout and a watch period, and a watch period more).
func TestAnUnconfirmedResetEndsOtherInstancesLeases(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	a := openLeased(t, srv, redis.Options{Instances: 2, OnStoreError: failover.Local, Timeout: time.Second,
		Lease: redis.LeaseOptions{MaxAge: time.Hour, Idle: time.Hour}})
	c := sluice.Check{Key: "unconfirmed", Limit: sluice.FixedWindow(100, 400*24*time.Hour).Named("fw"), Cost: 1}
	for range 10 {
		spendN(t, a, c, 1)
		settled(t, a.Leases())
	}
	before := settled(t, a.Leases())
	if before.Held < 5 {
		t.Fatalf("a holds %d units of lease before the notice, want a lease", before.Held)
	}
	time.Sleep(3 * 100 * time.Millisecond) // a's watch has read the stream once: it reads what follows
	rc := srv.Client(t)
	if err := rc.Do(context.Background(), rc.B().Xadd().Key("sluice:resets").Id("*").FieldValue().
		FieldValue("k", c.Key).FieldValue("l", c.Limit.ID()).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return a.Leases().Stats().Lost-before.Lost >= before.Held })
}
