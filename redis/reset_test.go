package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// TestResetForgetsASubjectsStates: after Reset, a subject refused under
// every limit of its plan is admitted at once, another subject's states
// are untouched, and Reset reports how many states Redis held.
func TestResetForgetsASubjectsStates(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	store := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	limits := []sluice.Limit{sluice.FixedWindow(1, time.Hour).Named("hourly"), sluice.GCRA(1, time.Hour).Named("steady")}
	ctx := context.Background()
	lim := sluice.NewLimiter(store)
	call := func(subject string) bool {
		t.Helper()
		checks := []sluice.Check{{Key: subject, Limit: limits[0], Cost: 1}, {Key: subject, Limit: limits[1], Cost: 1}}
		var d sluice.Decision
		if err := lim.Allow(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	for _, s := range []string{"alice", "bob"} {
		if !call(s) || call(s) {
			t.Fatalf("%s: want the first call admitted and the second refused", s)
		}
	}
	n, err := store.Reset(ctx, "alice", limits)
	if err != nil || n != 2 {
		t.Fatalf("Reset = %d, %v; want 2 states forgotten", n, err)
	}
	if !call("alice") {
		t.Error("alice refused after her reset")
	}
	if call("bob") {
		t.Error("bob admitted: alice's reset touched his states")
	}
	if n, err := store.Reset(ctx, "carol", limits); err != nil || n != 0 {
		t.Errorf("Reset of an unseen subject = %d, %v; want 0", n, err)
	}
}

// A store without a timeout of its own (WithTimeout(0): the caller's
// context alone bounds a call) resets as any other does.
func TestResetWithoutATimeoutOfItsOwn(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	store := redis.New(srv.Client(t), redis.WithTimeout(0))
	limit := sluice.FixedWindow(1, time.Hour).Named("hourly")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	lim := sluice.NewLimiter(store)
	var d sluice.Decision
	if err := lim.Allow(ctx, []sluice.Check{{Key: "alice", Limit: limit, Cost: 1}}, &d); err != nil || !d.Allowed {
		t.Fatalf("first call: %v, allowed %v", err, d.Allowed)
	}
	if n, err := store.Reset(ctx, "alice", []sluice.Limit{limit}); err != nil || n != 1 {
		t.Fatalf("Reset = %d, %v; want 1 state forgotten", n, err)
	}
}

// On a Cluster, Reset of a subject that starts with "}" (written
// percent-encoded, see Key) forgets every one of its limits, and reports
// how many Redis held.
func TestResetOnAClusterOfASubjectWithBraces(t *testing.T) {
	t.Parallel()
	store := redis.New(redistest.Cluster(t).Client(t), redis.WithTimeout(testTimeout))
	var limits []sluice.Limit
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		limits = append(limits, sluice.FixedWindow(1, time.Hour).Named(name))
	}
	ctx := context.Background()
	lim := sluice.NewLimiter(store)
	allowed := func() bool {
		t.Helper()
		checks := make([]sluice.Check, len(limits))
		for i, l := range limits {
			checks[i] = sluice.Check{Key: "}x", Limit: l, Cost: 1}
		}
		var d sluice.Decision
		if err := lim.Allow(ctx, checks, &d); err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	if !allowed() || allowed() {
		t.Fatal("want the first call admitted and the second refused")
	}
	n, err := store.Reset(ctx, "}x", limits)
	if err != nil || n != len(limits) {
		t.Fatalf("Reset = %d, %v; want %d states forgotten", n, err, len(limits))
	}
	if !allowed() {
		t.Error("refused after its reset")
	}
}
