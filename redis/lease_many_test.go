package redis_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// The leases of many keys go back in script runs of a bounded size. One
// run for all of them kept Redis busy for its whole length, at a few µs a
// key (150 ms and more for the 30,000 keys a flood of clients leased, whose
// leases end together at their window's end), every other call of every
// instance waiting; with the default 50 ms timeout the instance counted
// the run as failed, although Redis gave every unit back. Redis's slow
// log shows every run that took long enough to be one of those, with its
// number of keys.
func TestLeasesOfManyKeysGoBackInRunsOfBoundedSize(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	const slow = 5 * time.Millisecond
	srv.MustDo("CONFIG", "SET", "slowlog-log-slower-than", fmt.Sprint(slow.Microseconds()))
	g := openLeased(t, srv, redis.Options{Instances: 2, OnStoreError: failover.Local,
		Lease: redis.LeaseOptions{Idle: time.Hour, MaxAge: time.Hour}})
	limit := sluice.FixedWindow(10_000, 400*24*time.Hour)
	const keys, perCall = 30_000, 50
	checks := make([]sluice.Check, perCall)
	out := make([]sluice.Status, perCall)
	for i := 0; i < keys; i += perCall {
		for j := range checks {
			checks[j] = sluice.Check{Key: fmt.Sprint("flood-", i+j), Limit: limit, Cost: 1}
		}
		if err := g.Apply(context.Background(), checks, out); err != nil {
			t.Fatal(err)
		}
	}
	before := settled(t, g.Leases())
	if before.Keys < keys*9/10 {
		t.Fatalf("leases of %d keys held, want about %d", before.Keys, keys)
	}
	srv.MustDo("SLOWLOG", "RESET")
	if err := g.Leases().Return(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The sweep may be giving back part of them, queued while Return
	// retired the rest.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		after := g.Leases().Stats()
		got := after.Returned - before.Returned
		if got == before.Held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d units held returned (%d failed runs)", got, before.Held, after.Failures-before.Failures)
		}
	}
	entries, _ := srv.MustDo("SLOWLOG", "GET", "10").([]any)
	for _, e := range entries {
		f, _ := e.([]any)
		if len(f) < 4 {
			continue
		}
		args, _ := f[3].([]any)
		if len(args) < 3 || args[0] != "EVALSHA" && args[0] != "EVAL" {
			continue
		}
		// A give-back run's keys: a state key and its reset key per lease.
		if n, _ := strconv.Atoi(fmt.Sprint(args[2])); n > 2*256 {
			t.Errorf("a give-back of the leases of %d keys ran %d µs in Redis with %d keys in one run", before.Keys, f[2], n)
		}
	}
}
