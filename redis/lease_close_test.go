package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// Close gives back the leases it holds within a bound of time even when
// Redis does not answer and the store has no timeout of its own
// (Options.Timeout < 0: calls are bounded by their caller's context): a
// process shutting down must not hang on its leases.
func TestLeasedCloseIsBoundedWhenRedisDoesNotAnswer(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{Instances: 1, OnStoreError: failover.Local, Timeout: -1,
		Lease: redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	c := sluice.Check{Key: "closing", Limit: sluice.FixedWindow(10_000, 400*24*time.Hour), Cost: 1}
	// A lease's size follows the local rate, which a loaded machine slows:
	// spend until one holds units to give back.
	for round := 1; ; round++ {
		spendN(t, g, c, 40)
		if settled(t, g.Leases()).Held >= 1 {
			break
		}
		if round == 20 {
			t.Fatalf("no units of lease held after %d checks, want a lease to give back on Close", 40*round)
		}
	}
	srv.Pause()
	defer srv.Resume()
	done := make(chan struct{})
	start := time.Now()
	go func() {
		g.Close()
		close(done)
	}()
	select {
	case <-done:
		t.Logf("Close returned %v after it was called", time.Since(start))
	case <-time.After(20 * time.Second):
		t.Fatalf("Close has not returned 20 s after it was called, with Redis stopped; leases %+v", g.Leases().Stats())
	}
}

// A call after Close is decided by the store behind: a lease it took
// would never go back (the background give-back has stopped, and Close
// has given back what it held), so its unspent units would stay counted
// until the window ended.
func TestLeasedCallsAfterCloseTakeNoLease(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	st := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	l := redis.NewLeased(st, st, 1, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour, MaxAge: time.Hour})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	c := sluice.Check{Key: "after-close", Limit: sluice.FixedWindow(1000, 400*24*time.Hour), Cost: 1}
	if n := spendN(t, l, c, 10); n != 10 {
		t.Fatalf("admitted %d of 10 after Close", n)
	}
	if left := peek(t, srv, c); left != 1000-10 {
		t.Errorf("Redis has %d left after 10 units admitted after Close, want %d: %d units leased and never given back; leases %+v",
			left, 1000-10, 1000-10-left, l.Stats())
	}
}
