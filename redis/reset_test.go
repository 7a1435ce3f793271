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
