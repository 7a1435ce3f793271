package redis_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/redis"
)

// rueidis keeps the error of the last connection a mux failed to make in
// the mux's one dead wire, and Close puts that dead wire in place of every
// connection. When the last failure was a hasty call giving up on its
// HELLO (an error wrapping errMakerGaveUp, or a bare context error), every
// call on the closed store reads it as another call's give-up (unsent) and
// is sent again at once: without a bound it would spin until its own
// deadline, and without one never return.
// A call on a closed store fails at once: a call is sent again so a few
// times at most (maxResends). Only under WithReplicas:
// its runs (a script and a WAIT) go through the blocking pool, which once
// closed hands out that dead wire every time; the pipelined path puts a
// fresh wire back and fails by the closed connector.
func TestACallOnAClosedStoreFailsAtOnceAfterAHastyCallGaveUp(t *testing.T) {
	addr := farRedis(t) // a round trip of 20 ms: a 2 ms call cannot finish a HELLO
	s, err := redis.Dial(redis.Options{Addrs: []string{addr}, Timeout: 2 * time.Second}, redis.WithBatching(0), redis.WithReplicas(1, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.FixedWindow(1_000_000, time.Hour)
	var wg sync.WaitGroup
	hastyCalls(&wg, 16, func(i int) time.Duration { return 2 * time.Millisecond }, func(ctx context.Context, i int) {
		s.Apply(ctx, []sluice.Check{{Key: "hasty-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, make([]sluice.Status, 1))
	})
	wg.Wait()
	s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Apply(ctx, []sluice.Check{{Key: "after-close", Limit: lim, Cost: 1}}, make([]sluice.Status, 1))
	took := time.Since(start)
	if err == nil {
		t.Fatal("a call on a closed store succeeded")
	}
	if took > 300*time.Millisecond {
		t.Errorf("a call on a closed store took %v to fail (%v): it was sent again and again, the closed "+
			"client's last failed connection read as another call's give-up; want a failure at once", took.Round(time.Millisecond), err)
	}
}

// The same through Open, whose Close says that calls after Close are
// decided by OnStoreError: at once, not after the store's Timeout (2 s).
func TestACallAfterCloseIsDecidedByOnStoreErrorAtOnce(t *testing.T) {
	addr := farRedis(t)
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{addr}, Instances: 1,
		Replicas: 1, ReplicaWait: 5 * time.Millisecond, OnStoreError: failover.Deny, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lim := sluice.FixedWindow(1_000_000, time.Hour)
	var wg sync.WaitGroup
	hastyCalls(&wg, 16, func(i int) time.Duration { return 2 * time.Millisecond }, func(ctx context.Context, i int) {
		g.Apply(ctx, []sluice.Check{{Key: "hasty-" + strconv.Itoa(i), Limit: lim, Cost: 1}}, make([]sluice.Status, 1))
	})
	wg.Wait()
	g.Close()

	out := make([]sluice.Status, 1)
	start := time.Now()
	err = g.Apply(context.Background(), []sluice.Check{{Key: "after-close", Limit: lim, Cost: 1}}, out)
	took := time.Since(start)
	if err != nil || !out[0].Unavailable {
		t.Fatalf("a call after Close: %v, %+v; want a decision of OnStoreError", err, out[0])
	}
	if took > 300*time.Millisecond {
		t.Errorf("a call after Close was decided by OnStoreError after %v, want at once: it was sent again and again "+
			"until the store's Timeout", took.Round(time.Millisecond))
	}
}
