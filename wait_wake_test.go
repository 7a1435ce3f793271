package sluice_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A Wait refused by rate limits alone sleeps the refusal's RetryAfter: a
// Release through the same Limiter, here of another client's concurrency
// lease, does not wake it to ask the store again.
func TestARateWaitIsNotWokenByAnotherClientsRelease(t *testing.T) {
	store := newKeyCountingStore(t)
	lim := sluice.NewLimiter(store)
	rate := []sluice.Check{{Key: "waiter", Limit: sluice.SlidingLog(1, time.Hour).Named("per-hour"), Cost: 1}}
	var d0 sluice.Decision
	if err := lim.Allow(context.Background(), rate, &d0); err != nil || !d0.Allowed {
		t.Fatalf("first call: %v %+v", err, d0)
	}
	store.count("waiter")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var d sluice.Decision
		done <- lim.Wait(ctx, rate, &d) // refused for an hour: sleeps
	}()
	waitCalls(t, store, 1)

	other := []sluice.Check{{Key: "someone-else", Limit: sluice.Concurrency(10, time.Minute), Cost: 1}}
	for range 20 {
		var d sluice.Decision
		if err := lim.Allow(context.Background(), other, &d); err != nil || !d.Allowed {
			t.Fatalf("other client: %v %+v", err, d)
		}
		if err := lim.Release(context.Background(), other, &d); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // time for a woken waiter to ask
	calls := store.calls.Load()
	cancel()
	<-done
	if calls != 1 {
		t.Errorf("the per-hour waiter asked the store %d times: another client's releases woke it from its hour's sleep", calls)
	}
}

// A Wait refused by a concurrency limit is woken by a Release through the
// same Limiter of a lease of that limit for its key, and by no other: the
// releases of another key's leases leave it to its polling, every 50 to
// 100ms once its interval has grown.
func TestWaitWakesOnlyForReleasesOfTheLeasesItWaitsFor(t *testing.T) {
	store := newKeyCountingStore(t)
	lim := sluice.NewLimiter(store)
	slots := sluice.Concurrency(3, time.Hour).Named("slots")
	bg := context.Background()
	var held sluice.Decision
	if err := lim.Allow(bg, []sluice.Check{{Key: "a", Limit: slots, Cost: 2}}, &held); err != nil || !held.Allowed {
		t.Fatalf("held: %v %+v", err, held)
	}
	store.count("a")
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var d sluice.Decision
		done <- lim.Wait(ctx, []sluice.Check{{Key: "a", Limit: slots, Cost: 3}}, &d) // never fits while held
	}()
	waitCalls(t, store, 8) // its poll interval has grown to 100ms (2+4+…+64ms)

	// cycle takes and gives back n leases of key, 2ms apart, and returns
	// how many calls the waiter made meanwhile and the most its polling
	// alone explains.
	cycle := func(key string, n int) (calls, polls int64) {
		checks := []sluice.Check{{Key: key, Limit: slots, Cost: 1}}
		before, start := store.calls.Load(), time.Now()
		for range n {
			var d sluice.Decision
			if err := lim.Allow(bg, checks, &d); err != nil || !d.Allowed {
				t.Fatalf("lease of %q: %v %+v", key, err, d)
			}
			if err := lim.Release(bg, checks, &d); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		return store.calls.Load() - before, int64(time.Since(start)/(50*time.Millisecond)) + 2
	}
	if calls, polls := cycle("b", 100); calls > polls {
		t.Errorf("100 releases of key b's leases: the waiter for key a asked %d times, more than its polling's %d", calls, polls)
	}
	if calls, polls := cycle("a", 100); calls < 2*polls {
		t.Errorf("100 releases of key a's leases: the waiter for key a asked %d times, no more than its polling would (%d): releases did not wake it", calls, polls)
	}
	cancel()
	<-done
}

// waitCalls waits up to 5s for store to have counted n calls.
func waitCalls(t *testing.T, store *keyCountingStore, n int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); store.calls.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d store calls after 5s, want %d", store.calls.Load(), n)
		}
	}
}
