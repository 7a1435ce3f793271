package memory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Releasing the same Decision twice frees one slot, not two: the second
// Release finds nothing to give back.
func TestDoubleReleaseFreesOneSlot(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(2, time.Minute), Cost: 1}}
	var a, b sluice.Decision
	for _, d := range []*sluice.Decision{&a, &b} {
		if err := lim.Allow(ctx, checks, d); err != nil || !d.Allowed {
			t.Fatalf("lease: %+v %v", d, err)
		}
	}
	for range 2 {
		if err := lim.Release(ctx, checks, &a); err != nil {
			t.Fatal(err)
		}
	}
	// One slot is free (a's); b still holds the other.
	var c, d sluice.Decision
	if err := lim.Allow(ctx, checks, &c); err != nil || !c.Allowed {
		t.Fatalf("after releasing a: %+v %v", c, err)
	}
	if err := lim.Allow(ctx, checks, &d); err != nil || d.Allowed {
		t.Fatalf("a second release of a freed b's slot too: %+v %v", d, err)
	}
}

// Leases taken in the same microsecond are told apart: releasing one frees
// exactly one, even when the store's clock stands still.
func TestLeasesOfOneInstantAreDistinct(t *testing.T) {
	at := sluice.Epoch.Add(time.Hour)
	s := memory.New(memory.WithClock(func() time.Time { return at }), memory.WithSweepInterval(0))
	t.Cleanup(func() { s.Close() })
	lim := sluice.NewLimiter(s)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(3, time.Minute), Cost: 1}}
	var ds [3]sluice.Decision
	seen := map[int64]bool{}
	for i := range ds {
		if err := lim.Allow(ctx, checks, &ds[i]); err != nil || !ds[i].Allowed {
			t.Fatalf("lease %d: %+v %v", i, ds[i], err)
		}
		lease := ds[i].Statuses[0].Lease
		if seen[lease] {
			t.Fatalf("lease %d has the stamp %d of an earlier one", i, lease)
		}
		seen[lease] = true
	}
	copyOfFirst := ds[0]
	copyOfFirst.Statuses = append([]sluice.Status(nil), ds[0].Statuses...)
	for _, d := range []*sluice.Decision{&ds[0], &copyOfFirst} {
		if err := lim.Release(ctx, checks, d); err != nil {
			t.Fatal(err)
		}
	}
	var d sluice.Decision
	if err := lim.Allow(ctx, checks, &d); err != nil || !d.Allowed {
		t.Fatalf("after one release: %+v %v", d, err)
	}
	if err := lim.Allow(ctx, checks, &d); err != nil || d.Allowed {
		t.Fatalf("a copy of a released decision freed another lease: %+v %v", d, err)
	}
}

// Wait blocks until a slot is released, well before the lease would
// expire, and gives up at its context's deadline.
func TestWaitForAConcurrencySlot(t *testing.T) {
	_, lim, _ := newStore(t)
	ctx := context.Background()
	checks := []sluice.Check{{Key: "k", Limit: sluice.Concurrency(1, time.Minute), Cost: 1}}
	var held sluice.Decision
	if err := lim.Allow(ctx, checks, &held); err != nil || !held.Allowed {
		t.Fatalf("first lease: %+v %v", held, err)
	}

	start := time.Now() // before the deadline is set: a loaded machine may pause between them
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	var d sluice.Decision
	err := lim.Wait(short, checks, &d)
	if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
		t.Fatalf("Wait with every slot held: %v, %+v; want DeadlineExceeded", err, d)
	}
	if took := time.Since(start); took < 40*time.Millisecond || took > 2*time.Second {
		t.Errorf("Wait gave up after %v, want about its 50ms deadline", took)
	}

	go func() {
		time.Sleep(30 * time.Millisecond)
		if err := lim.Release(ctx, checks, &held); err != nil {
			t.Error(err)
		}
	}()
	start = time.Now()
	if err := lim.Wait(ctx, checks, &d); err != nil || !d.Allowed {
		t.Fatalf("Wait while a slot is released: %v, %+v", err, d)
	}
	if took := time.Since(start); took < 25*time.Millisecond || took > 5*time.Second {
		t.Errorf("Wait returned after %v; the slot was released after 30ms (the lease is a minute)", took)
	}
}

// A release under a concurrency limit that cannot be decided is an error
// wrapping sluice.ErrInvalidCheck, as the Redis store's is, and gives back
// nothing.
func TestReleaseUnderAnInvalidLimitIsAnError(t *testing.T) {
	store, _, _ := newStore(t)
	ctx := context.Background()
	good := sluice.Concurrency(1, time.Minute).Named("c")
	out := make([]sluice.Status, 1)
	if err := store.Apply(ctx, []sluice.Check{{Key: "k", Limit: good, Cost: 1}}, out); err != nil || !out[0].Allowed {
		t.Fatalf("%+v, %v", out[0], err)
	}
	bad := sluice.Concurrency(1, 0).Named("c")
	if err := store.Release(ctx, []sluice.Check{{Key: "k", Limit: bad, Cost: 1}}, []int64{out[0].Lease}); !errors.Is(err, sluice.ErrInvalidCheck) {
		t.Errorf("release under %v: %v, want an error wrapping ErrInvalidCheck", bad, err)
	}
}
