package sluice_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A leaky-bucket queue's turn that starts after the context's deadline is
// refused, as x/time/rate's Wait refuses a reservation whose delay passes
// the deadline: Wait returns an error wrapping context.DeadlineExceeded, d
// is a refusal by the queue whose RetryAfter is its turn's Delay, and what
// the admission charged that can be given back is given back (a fixed
// window's count, a concurrency lease). A turn within the deadline is
// admitted with its Delay, as before.
func TestWaitRefusesAQueueTurnAfterTheDeadlineAndGivesBackItsCharges(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	s := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithSweepInterval(0))
	t.Cleanup(func() { s.Close() })
	lim := sluice.NewLimiter(s)
	queue := sluice.LeakyBucket(1, time.Hour).WithBurst(1).WithMaxWait(10 * time.Hour).Named("queue")
	hourly := sluice.FixedWindow(2, time.Hour).Named("hourly")
	inFlight := sluice.Concurrency(1, time.Minute).Named("in-flight")
	checks := []sluice.Check{{Key: "k", Limit: queue, Cost: 1}, {Key: "k", Limit: hourly, Cost: 1}}
	var d sluice.Decision
	if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed || d.Delay != 0 {
		t.Fatalf("first: %+v %v", d, err)
	}

	checks = append(checks, sluice.Check{Key: "k", Limit: inFlight, Cost: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := lim.Wait(ctx, checks, &d)
	if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
		t.Fatalf("Wait with a 1m deadline for a turn in %v: err %v, allowed %v; want an error wrapping context.DeadlineExceeded",
			d.Delay, err, d.Allowed)
	}
	if len(d.Violated) != 1 || d.Violated[0] != "queue" || d.Limit.Name() != "queue" || d.RetryAfter != time.Hour {
		t.Errorf("refusal: violated %v by %q, retry after %v; want the queue's, after its turn's 1h", d.Violated, d.Limit.Name(), d.RetryAfter)
	}
	var peek sluice.Decision
	if err := lim.Allow(context.Background(), []sluice.Check{{Key: "k", Limit: hourly}, {Key: "k", Limit: inFlight}}, &peek); err != nil {
		t.Fatal(err)
	}
	if peek.Statuses[0].Remaining != 1 || peek.Statuses[1].Remaining != 1 {
		t.Errorf("after the refused turn, %d of 2 left in the hour and %d of 1 lease free; want its charge and lease given back",
			peek.Statuses[0].Remaining, peek.Statuses[1].Remaining)
	}

	late, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	if err := lim.Wait(late, checks, &d); err != nil || !d.Allowed || d.Delay != 2*time.Hour {
		t.Errorf("Wait with a 3h deadline for the next turn: %v, allowed %v, delay %v; want admitted to wait 2h", err, d.Allowed, d.Delay)
	}
}

// Wait on a context already done returns an error wrapping its error and
// decides nothing, on every store, as x/time/rate's Wait does; the memory
// store, which decides an Allow whose context is done, would otherwise
// spend the quota.
func TestWaitOnADoneContextSpendsNothing(t *testing.T) {
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	s := memory.New(memory.WithClock(func() time.Time { return now }), memory.WithSweepInterval(0))
	t.Cleanup(func() { s.Close() })
	lim := sluice.NewLimiter(s)
	daily := sluice.Calendar(1, sluice.Day).Named("daily")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var d sluice.Decision
	if err := lim.Wait(ctx, []sluice.Check{{Key: "k", Limit: daily, Cost: 1}}, &d); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled context: err %v, allowed %v; want an error wrapping context.Canceled", err, d.Allowed)
	}
	if err := lim.Allow(context.Background(), []sluice.Check{{Key: "k", Limit: daily}}, &d); err != nil {
		t.Fatal(err)
	}
	if d.Remaining != 1 {
		t.Errorf("after Wait on a cancelled context the day's quota shows %d of 1 left: the cancelled Wait spent it", d.Remaining)
	}
}
