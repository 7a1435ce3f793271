package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A refusal the over-limit cache repeats reports a leased limit it never
// evaluated as sluice.Status.Undecided, whose Remaining and ResetAfter (0)
// are no measure of the key's use: the lease does not hear them as the
// shared remainder, which would state the leased limit, untouched in
// Redis, from its lease alone (Remaining = units held, a reset "now")
// until the lease ran dry — a daily quota with ~990 left told as almost
// spent.
func TestALeaseHearsNoFiguresFromACheckTheCacheDidNotDecide(t *testing.T) {
	srv := redistest.Standalone(t)
	perDay := sluice.FixedWindow(1000, 24*time.Hour).Named("per-day")
	burst := sluice.SlidingLog(1, time.Minute).Named("burst") // never leased
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout,
		Lease: redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour}}, redis.WithBatching(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx := context.Background()
	apply := func(checks ...sluice.Check) []sluice.Status {
		t.Helper()
		out := make([]sluice.Status, len(checks))
		if err := g.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	day := sluice.Check{Key: "k", Limit: perDay, Cost: 1}
	// Leases of per-day taken and spent from.
	if n := spendN(t, g, day, 2); n != 2 {
		t.Fatalf("admitted %d of 2", n)
	}
	settled(t, g.Leases())
	if n := spendN(t, g, day, 3); n != 3 {
		t.Fatalf("admitted %d of 3", n)
	}
	settled(t, g.Leases())
	before := apply(day)[0]
	if !before.Allowed || before.Remaining < 990 || before.ResetAfter <= time.Minute {
		t.Fatalf("per-day from its lease: %+v", before)
	}
	// burst refused by Redis, then remembered by the cache.
	b := sluice.Check{Key: "k", Limit: burst, Cost: 1}
	if !apply(b)[0].Allowed {
		t.Fatal("first burst call refused")
	}
	if apply(b)[0].Allowed {
		t.Fatal("second burst call admitted")
	}
	// The cache repeats the refusal; per-day is Undecided.
	hits := g.Cache().Stats().RoundTripsSaved
	out := apply(b, day)
	if out[0].Allowed || !out[1].Undecided || g.Cache().Stats().RoundTripsSaved == hits {
		t.Fatalf("want a refusal the cache repeats with per-day Undecided: %+v", out)
	}
	// per-day was neither counted nor measured: its figures stand.
	after := apply(day)[0]
	if !after.Allowed || after.Remaining < before.Remaining-5 || after.ResetAfter < before.ResetAfter-time.Minute {
		t.Errorf("per-day after a cached refusal left it Undecided: %+v; before it: %+v (nothing of it was spent meanwhile but this call)",
			after, before)
	}
}
