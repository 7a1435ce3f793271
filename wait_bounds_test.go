package sluice_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// keyCountingStore counts the calls to Apply whose first check is of key
// (every call while key is empty).
type keyCountingStore struct {
	*memory.Store
	key   atomic.Pointer[string]
	calls atomic.Int64
}

func newKeyCountingStore(t *testing.T, opts ...memory.Option) *keyCountingStore {
	mem := memory.New(append([]memory.Option{memory.WithSweepInterval(0)}, opts...)...)
	t.Cleanup(func() { mem.Close() })
	return &keyCountingStore{Store: mem}
}

// count counts from now on the calls for key, from zero.
func (s *keyCountingStore) count(key string) {
	s.key.Store(&key)
	s.calls.Store(0)
}

func (s *keyCountingStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	if k := s.key.Load(); k == nil || *k == "" || checks[0].Key == *k {
		s.calls.Add(1)
	}
	return s.Store.Apply(ctx, checks, out)
}

// A call refused by a rate limit cannot pass before that limit's
// RetryAfter, whatever lease a concurrency limit refusing it too gets back:
// when that RetryAfter ends after the context's deadline, Wait returns an
// error wrapping context.DeadlineExceeded after one decision, as it does
// without the concurrency check.
func TestWaitGivesUpAtOnceOnARateRefusalPastTheDeadlineWhateverLeaseComesBack(t *testing.T) {
	store := newKeyCountingStore(t)
	lim := sluice.NewLimiter(store)
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.Concurrency(1, time.Hour), Cost: 1},
		{Key: "k", Limit: sluice.SlidingLog(1, time.Hour).Named("per-hour"), Cost: 1},
	}
	var held sluice.Decision
	if err := lim.Allow(context.Background(), checks, &held); err != nil || !held.Allowed {
		t.Fatalf("first call: %v %+v", err, held)
	}
	store.count("")

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var d sluice.Decision
	start := time.Now()
	err := lim.Wait(ctx, checks, &d)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
		t.Fatalf("Wait: %v (allowed %v), want DeadlineExceeded", err, d.Allowed)
	}
	if calls := store.calls.Load(); calls != 1 || took > 500*time.Millisecond {
		t.Errorf("Wait made %d store calls over %v for a call the per-hour log refuses for %v, past its 1 s deadline; want one, at once",
			calls, took.Round(time.Millisecond), d.Statuses[1].RetryAfter.Round(time.Second))
	}
}

// Refused by a rate limit and by a concurrency limit, Wait sleeps the rate
// limit's RetryAfter before it asks again: no lease given back lets the
// call through sooner.
func TestWaitSleepsOutARateRefusalBeforePollingForALease(t *testing.T) {
	store := newKeyCountingStore(t)
	lim := sluice.NewLimiter(store)
	checks := []sluice.Check{
		{Key: "k", Limit: sluice.Concurrency(1, time.Hour), Cost: 1},
		{Key: "k", Limit: sluice.SlidingLog(1, 600*time.Millisecond), Cost: 1},
	}
	var held sluice.Decision
	if err := lim.Allow(context.Background(), checks, &held); err != nil || !held.Allowed {
		t.Fatalf("first call: %v %+v", err, held)
	}
	store.count("")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var d sluice.Decision
		done <- lim.Wait(ctx, checks, &d)
	}()
	time.Sleep(300 * time.Millisecond) // well within the log's 600ms
	calls := store.calls.Load()
	cancel()
	<-done
	if calls != 1 {
		t.Errorf("Wait asked the store %d times in the 300ms after a refusal by a log that admits no sooner than 600ms after; want once", calls)
	}
}

// A leaky-bucket queue that refuses a call (it is full) admits it
// RetryAfter later with a Delay of its whole MaxWait: Wait, whose deadline
// falls before RetryAfter + MaxWait, returns an error wrapping
// context.DeadlineExceeded at once and takes no place in the queue (which
// a bucket could not give back). So it does for a queue that fits with a
// Delay past the deadline in a call another limit refuses.
func TestWaitTakesNoQueuePlaceItsDeadlineCannotReach(t *testing.T) {
	queue := sluice.LeakyBucket(1, time.Second).WithMaxWait(2 * time.Second).Named("queue")
	for _, tc := range []struct {
		name   string
		checks []sluice.Check
		queued int           // calls the queue admitted before Wait's
		margin time.Duration // the deadline, after the first refusal's RetryAfter
	}{
		{"a full queue: its turn starts RetryAfter + MaxWait from now",
			[]sluice.Check{{Key: "q", Limit: queue, Cost: 1}}, 3, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New(memory.WithSweepInterval(0), memory.WithClockResolution(0))
			t.Cleanup(func() { mem.Close() })
			lim := sluice.NewLimiter(mem)
			bg := context.Background()
			var d sluice.Decision
			for i := 0; i < tc.queued; i++ {
				if err := lim.Allow(bg, tc.checks[:1], &d); err != nil || !d.Allowed {
					t.Fatalf("queued call %d: %v %+v", i, err, d)
				}
			}
			if len(tc.checks) > 1 { // spend the window
				if err := lim.Allow(bg, tc.checks[1:], &d); err != nil || !d.Allowed {
					t.Fatalf("window: %v %+v", err, d)
				}
			}
			if err := lim.Allow(bg, tc.checks, &d); err != nil || d.Allowed {
				t.Fatalf("the call: %v %+v, want refused", err, d)
			}
			retry := d.RetryAfter
			peek := []sluice.Check{{Key: "q", Limit: queue, Cost: 0}}
			if err := lim.Allow(bg, peek, &d); err != nil {
				t.Fatal(err)
			}
			resetBefore, at := d.ResetAfter, time.Now()

			ctx, cancel := context.WithTimeout(bg, retry+tc.margin)
			defer cancel()
			start := time.Now()
			err := lim.Wait(ctx, tc.checks, &d)
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Wait: %v, want DeadlineExceeded", err)
			}
			if err := lim.Allow(bg, peek, &d); err != nil {
				t.Fatal(err)
			}
			// Nothing spent: the bucket drained meanwhile. A place spent:
			// it holds a unit (1 s) more than that.
			spent := d.ResetAfter - (resetBefore - time.Since(at))
			if took > 400*time.Millisecond || spent > 500*time.Millisecond {
				t.Errorf("Wait took %v (RetryAfter %v, deadline %v after it) and left the queue %v fuller than draining would (%v)",
					took.Round(time.Millisecond), retry, tc.margin, spent.Round(time.Millisecond), err)
			}
		})
	}
}
