package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/storetest"
	"github.com/sluice-dev/sluice/memory"
)

// failedOver is the shared state before and after a Sentinel
// failover: the same data (one redis-server here, as a replica fully
// caught up holds it), decided first by the old master a, then by the
// promoted replica b, whose clock is behind a's; down fails every call.
type failedOver struct {
	a, b *Store
	useB atomic.Bool
	down atomic.Bool
}

func (s *failedOver) cur() *Store {
	if s.useB.Load() {
		return s.b
	}
	return s.a
}

func (s *failedOver) applyAt(ctx context.Context, checks []sluice.Check, out []sluice.Status, ats []int64) error {
	if s.down.Load() {
		return storetest.ErrRedisDown
	}
	return s.cur().applyAt(ctx, checks, out, ats)
}

func (s *failedOver) take(ctx context.Context, checks []sluice.Check, want []int64, out []sluice.Status, got []int64) (int64, error) {
	if s.down.Load() {
		return 0, storetest.ErrRedisDown
	}
	return s.cur().take(ctx, checks, want, out, got)
}

func (s *failedOver) giveBack(ctx context.Context, checks []sluice.Check, marks []string, ats []int64) (int64, error) {
	if s.down.Load() {
		return 0, storetest.ErrRedisDown
	}
	return s.cur().giveBack(ctx, checks, marks, ats)
}

// failedOverStore is the same switch seen as a sluice.Store (the
// failover's primary).
type failedOverStore struct {
	*Store
	sw *failedOver
}

func (s failedOverStore) Apply(ctx context.Context, checks []sluice.Check, out []sluice.Status) error {
	return s.sw.cur().Apply(ctx, checks, out)
}

// A Sentinel failover moves a key's decisions to another server, whose
// clock is not the old master's: a promoted replica whose clock is behind
// by more than the failover took times every take it decides earlier than
// the old master's last. Those times order nothing across servers: the
// failover's memo keeps the lower remainder of the two (a take timed
// earlier is of unknown order), not the old master's higher one, so that
// an outage does not have the fallback admit again what the new master's
// takes counted. An instance alone admits across an outage, from its
// leases and its fallback together, at most the limit. Here the promoted
// replica's clock is 2 s behind.
func TestTakesDecidedByAPromotedReplicaWhoseClockIsBehindAreRemembered(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	const hour = int64(time.Hour / time.Microsecond)
	start := conformance.NewClock(conformance.DefaultStart).Micros()
	start -= start % hour
	clockA := conformance.NewClock(sluice.TimeFromMicros(start + hour/2))
	clockB := conformance.NewClock(sluice.TimeFromMicros(start + hour/2 - 2_000_000))
	a := New(client, WithTimeForTesting(clockA.Now), WithTimeout(testTimeout))
	b := New(client, WithTimeForTesting(clockB.Now), WithTimeout(testTimeout))
	sw := &failedOver{a: a, b: b}
	primary := &storetest.Flaky{Next: failedOverStore{Store: a, sw: sw}}
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	fo, err := failover.New(primary, local, failover.Options{OnError: failover.Local, Instances: 1, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	leased := newLeased(fo, sw, nil, 1, LeaseOptions{Mode: LeaseAuto, Idle: time.Hour, MaxAge: time.Hour})
	t.Cleanup(func() { leased.Close() })

	const q = 100
	x := sluice.Check{Key: "skew-x", Limit: sluice.FixedWindow(q, time.Hour).Named("x"), Cost: 1}
	ctx := context.Background()
	admitted := 0
	apply := func() {
		t.Helper()
		out := make([]sluice.Status, 1)
		if err := leased.Apply(ctx, []sluice.Check{x}, out); err != nil {
			t.Fatal(err)
		}
		if out[0].Allowed {
			admitted++
		}
	}
	for range 20 {
		apply()
	}
	// The failover: b decides from now on, its clock 2 s behind a's; both
	// go on at the same pace.
	sw.useB.Store(true)
	rounds := leased.Stats().RoundTrips
	for range 50 {
		clockA.Advance(10 * time.Millisecond)
		clockB.Advance(10 * time.Millisecond)
		apply()
	}
	if leased.Stats().RoundTrips == rounds {
		t.Fatal("the promoted replica decided no take")
	}
	// Redis fails: the leases are spent, then the fallback decides.
	sw.down.Store(true)
	primary.Fail(storetest.ErrRedisDown)
	for range 3 * q {
		apply()
	}
	if admitted > q {
		t.Errorf("one instance admitted %d of x in its window across an outage, for a limit of %d: the takes the promoted replica decided (its clock behind) were not remembered (leases %+v, failover %+v)",
			admitted, q, leased.Stats(), fo.Stats())
	}
}
