package sluice_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Wait sleeps a refusal's RetryAfter and is then admitted; it gives up at
// once when that sleep would pass its context's deadline, and when the
// call can never fit.
func TestWaitSleepsRetryAfter(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { s.Close() })
	lim := sluice.NewLimiter(s)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.SlidingLog(1, 2*time.Second), Cost: 1}}
	var d sluice.Decision
	if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
		t.Fatalf("first: %+v %v", d, err)
	}

	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := lim.Wait(short, checks, &d); !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
		t.Fatalf("Wait past its deadline: %v %+v, want DeadlineExceeded", err, d)
	}
	// Sleeping the wait would take about 2 s; seeing at once that it ends
	// after the deadline takes a decision, far less than a second even on
	// a loaded machine.
	if took := time.Since(start); d.RetryAfter > 5*time.Millisecond && took > time.Second {
		t.Errorf("Wait took %v to see that a %v wait ends after its 5ms deadline", took, d.RetryAfter)
	}

	start = time.Now()
	if err := lim.Wait(ctx, checks, &d); err != nil || !d.Allowed {
		t.Fatalf("Wait: %v %+v", err, d)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("Wait took %v for a 2s sliding window", took)
	}

	tooBig := []sluice.Check{{Key: "k", Limit: sluice.GCRA(2, time.Second), Cost: 3}}
	if err := lim.Wait(ctx, tooBig, &d); err == nil || d.Allowed || d.RetryAfter != sluice.Never {
		t.Fatalf("Wait for a cost above the burst: %v %+v, want an error at once", err, d)
	}
}

// A concurrency check whose cost is above its quantity can never take a
// lease: Wait says so at once instead of polling for a release until its
// context ends.
func TestWaitGivesUpAtOnceOnALeaseThatCanNeverFit(t *testing.T) {
	s := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { s.Close() })
	lim := sluice.NewLimiter(s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(2, time.Minute), Cost: 3}}
	var d sluice.Decision
	err := lim.Wait(ctx, checks, &d)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || d.Allowed || d.RetryAfter != sluice.Never {
		t.Fatalf("Wait for 3 leases of 2: %v %+v, want an error at once saying it never fits", err, d)
	}
}

// countingStore counts the calls to Apply of the Store it wraps.
type countingStore struct {
	sluice.Store
	applies int
}

func (s *countingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	s.applies++
	return s.Store.Apply(ctx, checks, out)
}

// A shadow concurrency limit's refusal holds no call back, so it does not
// make Wait poll for a release: refused by a rate limit whose wait ends
// after the context's deadline, Wait gives up at once after one decision.
func TestWaitIgnoresAShadowLeaseRefusal(t *testing.T) {
	mem := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { mem.Close() })
	store := &countingStore{Store: mem}
	lim := sluice.NewLimiter(store)
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.SlidingLog(1, time.Hour), Cost: 1},
		{Key: "k", Limit: sluice.Concurrency(1, time.Hour).WithShadow(true), Cost: 1},
	}
	var d sluice.Decision
	if err := lim.Allow(context.Background(), checks, &d); err != nil || !d.Allowed {
		t.Fatalf("first: %+v %v", d, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	store.applies = 0
	err := lim.Wait(ctx, checks, &d)
	if !errors.Is(err, context.DeadlineExceeded) || d.Allowed || d.Statuses[1].Allowed || store.applies != 1 {
		t.Fatalf("Wait: %v, %d decisions (shadow lease refused: %v), want DeadlineExceeded after one",
			err, store.applies, !d.Statuses[1].Allowed)
	}
}
