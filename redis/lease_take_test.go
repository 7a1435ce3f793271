package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// Near exhaustion — when the shared remainder an instance last heard of,
// not the size it asks for, bounds its take — what is left may be less
// than it asks by then. Its take is still one script run: the call's own
// unit is admitted with what is left as its lease, and when not even that
// unit is left the call is refused there, without a second run to decide
// it exactly.
func TestLeasedTakeNearExhaustionIsOneScriptRun(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	st := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	one := redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { one.Close() })
	apply := func(c sluice.Check) (sluice.Status, int) {
		t.Helper()
		before := evalCalls(t, srv)
		out := make([]sluice.Status, 1)
		if err := one.Apply(context.Background(), []sluice.Check{c}, out); err != nil {
			t.Fatal(err)
		}
		settled(t, one)
		return out[0], evalCalls(t, srv) - before
	}

	// Redis runs a script the first time by EVAL after EVALSHA fails: one
	// take near exhaustion (a first call of a limit of 10: its remainder
	// is at most 10, 10/2 = 5, under the size of 8) before the counted ones.
	spendN(t, one, sluice.Check{Key: "warm", Limit: sluice.FixedWindow(10, time.Hour), Cost: 1}, 2)

	near := sluice.Check{Key: "near", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}
	spendN(t, st, near, 76)
	spendN(t, one, near, 9) // one takes 1 + 8, hears 15 left, and spends its lease: its next take is 15/2 = 7
	spendN(t, st, near, 12) // 3 left, which one does not know
	warm := settled(t, one).Held
	got, runs := apply(near)
	if !got.Allowed || runs != 1 {
		t.Fatalf("a take asking 1 + 7 of the 3 units left: allowed %v in %d script runs, want admitted in 1", got.Allowed, runs)
	}
	if held, left := settled(t, one).Held-warm, peek(t, srv, near); held != 2 || left != 0 {
		t.Errorf("after the take: a lease of %d units, %d left in Redis; want the 2 left beyond the call's unit leased, 0 left", held, left)
	}

	gone := sluice.Check{Key: "gone", Limit: sluice.FixedWindow(100, time.Hour), Cost: 1}
	spendN(t, st, gone, 76)
	spendN(t, one, gone, 9) // one hears 15 left and spends its lease
	spendN(t, st, gone, 15) // none left
	got, runs = apply(gone)
	if got.Allowed || runs != 1 || got.RetryAfter <= 0 {
		t.Fatalf("a take with no unit left: %+v in %d script runs, want refused with a retry-after in 1", got, runs)
	}
}

// The takes of a call whose keys lie in several Cluster slots cannot be
// one script run: they ask cost and lease together, and a refusal is
// decided again exactly. The call still admits exactly what its tighter
// limit allows, all-or-nothing.
func TestLeasedTakeAcrossSlotsAdmitsExactly(t *testing.T) {
	t.Parallel()
	c := redistest.Cluster(t)
	g, err := redis.Open(context.Background(), redis.Options{Mode: redis.ModeCluster, Addrs: c.Addrs(), Timeout: testTimeout,
		Lease: redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	call := []sluice.Check{
		{Key: "slot-a", Limit: sluice.FixedWindow(30, time.Hour).Named("a"), Cost: 1},
		{Key: "slot-b", Limit: sluice.FixedWindow(20, time.Hour).Named("b"), Cost: 1},
	}
	admitted := 0
	for range 40 {
		out := make([]sluice.Status, 2)
		if err := g.Apply(context.Background(), call, out); err != nil {
			t.Fatal(err)
		}
		if out[0].Allowed && out[1].Allowed {
			admitted++
		}
	}
	// A call Redis did not answer in time is decided by the local
	// fallback, which is not what this test is about: say so.
	if st := g.Failover().Stats(); admitted != 20 || st.FallbackDecisions != 0 {
		t.Errorf("admitted %d calls of 40 under a limit of 20; failover %+v", admitted, st)
	}
	if l := g.Leases(); l == nil {
		t.Error("lease: auto opened a store without leases")
	} else if s := settled(t, l); s.Leases == 0 {
		t.Errorf("no lease taken across slots: %+v", s)
	}
}

// Under WithReplicas a take near exhaustion (lease_take.lua, which decides
// the call's own cost) is held to what every apply run is: a write no
// replica acknowledges is an error, never a decision a failover can forget.
func TestLeasedTakeNearExhaustionWaitsForReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t) // no replica: no wait is long enough
	st := redis.New(srv.Client(t), redis.WithTimeout(testTimeout), redis.WithReplicas(1, 50*time.Millisecond))
	leased := redis.NewLeased(st, st, 1, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour})
	t.Cleanup(func() { leased.Close() })
	// A remainder of 10 among 2 shares bounds a take (5 < 8 asked): the
	// first call's take is lease_take.lua.
	check := sluice.Check{Key: "scarce", Limit: sluice.FixedWindow(10, time.Hour).Named("hourly"), Cost: 1}
	out := make([]sluice.Status, 1)
	before := evalCalls(t, srv)
	err := leased.Apply(context.Background(), []sluice.Check{check}, out)
	if evalCalls(t, srv) == before {
		t.Fatal("no script ran")
	}
	if err == nil {
		t.Fatalf("admitted (%+v) by a write no replica holds; want an error wrapping ErrStoreUnavailable", out[0])
	}
	if !errors.Is(err, sluice.ErrStoreUnavailable) {
		t.Fatalf("%v, want an error wrapping ErrStoreUnavailable", err)
	}
}
