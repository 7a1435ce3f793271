package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// lateTake is the real shared state whose takes, while hold is
// set, answer only once release is closed (Redis ran them at once: their
// reply is late), and which fails every call while down.
type lateTake struct {
	*Store
	hold    atomic.Bool
	down    atomic.Bool
	ran     chan struct{}
	release chan struct{}
}

func (b *lateTake) late() {
	if b.hold.CompareAndSwap(true, false) {
		close(b.ran)
		<-b.release
	}
}

func (b *lateTake) applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error {
	if b.down.Load() {
		return storetest.ErrRedisDown
	}
	err := b.Store.applyAt(ctx, checks, out, ats)
	b.late()
	return err
}

func (b *lateTake) take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error) {
	if b.down.Load() {
		return 0, storetest.ErrRedisDown
	}
	g, err := b.Store.take(ctx, checks, want, out, got)
	b.late()
	return g, err
}

func (b *lateTake) giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) (int64, error) {
	if b.down.Load() {
		return 0, storetest.ErrRedisDown
	}
	return b.Store.giveBack(ctx, checks, marks, ats)
}

// A lease and the fallback never admit the same units: the fallback
// starts a key from its share of what Redis said was left after the
// instance's last take (failover.Store.Heard), in the order Redis decided
// its answers. A background take (a prefetch at low water) whose reply
// arrives after that of a call Redis decided later must not tell the
// failover a remainder Redis no longer had: the fallback would admit again
// the units of the call decided in between. One instance, a fixed window
// of 100: at most 100 admitted in the window across an outage.
func TestAnInstanceAloneAdmitsAtMostTheLimitAcrossAnOutageAfterALateTake(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	store := New(client, WithTimeout(testTimeout))
	primary := &storetest.Flaky{Next: store}
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	fo, err := failover.New(primary, local, failover.Options{OnError: failover.Local, Instances: 1, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	backend := &lateTake{Store: store, ran: make(chan struct{}), release: make(chan struct{})}
	leased := newLeased(fo, backend, nil, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour, MaxAge: time.Hour})
	t.Cleanup(func() { leased.Close() })

	const q = 100
	x := sluice.Check{Key: "heard-x", Limit: sluice.FixedWindow(q, time.Hour).Named("x"), Cost: 1}
	z := sluice.Check{Key: "heard-x", Limit: sluice.SlidingLog(1000, time.Hour).Named("z"), Cost: 1} // never leased
	ctx := context.Background()
	admitted := 0
	apply := func(checks ...sluice.Check) bool {
		t.Helper()
		out := make([]sluice.Status, len(checks))
		if err := leased.Apply(ctx, checks, out); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if !out[i].Allowed {
				return false
			}
		}
		admitted++
		return true
	}

	if !apply(x) {
		t.Fatal("first call refused")
	}
	if held := leased.Stats().Held; held < 4 {
		t.Fatalf("the first call leased %d units of x, want a lease to spend down to low water", held)
	}
	// Spend the lease down to its low water: the next lease is taken in
	// the background; Redis runs it, its reply comes late.
	backend.hold.Store(true)
	for leased.Stats().Prefetches == 0 {
		if !apply(x) {
			t.Fatal("a call covered by the lease refused")
		}
	}
	select {
	case <-backend.ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the prefetch never ran")
	}
	// A call Redis decides after that take, answered first.
	if !apply(x, z) {
		t.Fatal("a call decided by Redis refused")
	}
	close(backend.release)
	for leased.Stats().Taking != 0 {
		time.Sleep(time.Millisecond)
	}

	// Redis fails: the leases are spent, then the fallback decides.
	backend.down.Store(true)
	primary.Fail(storetest.ErrRedisDown)
	for range 3 * q {
		apply(x)
	}
	if admitted > q {
		t.Errorf("one instance admitted %d of x in its window across an outage, for a limit of %d (leases %+v, failover %+v)",
			admitted, q, leased.Stats(), fo.Stats())
	}
}
