package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// bothStep is one step of a sequence played on both stores at one clock:
// advance the clock, then either reset the key under the limit, refund the
// receipts of an earlier step, release its leases, or apply its check.
type bothStep struct {
	advance time.Duration
	reset   bool
	refund  int // 1-based index of an earlier apply step; 0: none
	release int // 1-based index of an earlier apply step; 0: none
	cost    int64
}

// playOnBoth plays steps for limit on one key on a memory store and on a
// Redis store reading the same test clock from start, each giving back
// its own receipts and leases, and returns each store's Status of the last
// apply step. The conformance suite holds each store to the reference
// without Reset, which is no sluice.Store method: here the stores are
// held to each other.
func playOnBoth(t *testing.T, start time.Time, limit sluice.Limit, steps []bothStep) (mem, red sluice.Status) {
	t.Helper()
	ctx := context.Background()
	clock := conformance.NewClock(start)
	ms := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { ms.Close() })
	rs := redis.New(redistest.Standalone(t).Client(t), redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
	key := fmt.Sprintf("both-%x", time.Now().UnixNano())
	type got struct{ m, r sluice.Status }
	outs := make([]got, len(steps)+1)
	earlier := func(n int) ([]sluice.Check, got) {
		return []sluice.Check{{Key: key, Limit: limit, Cost: steps[n-1].cost}}, outs[n]
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		switch {
		case s.reset:
			ms.Reset(key, []sluice.Limit{limit})
			if _, err := rs.Reset(ctx, key, []sluice.Limit{limit}); err != nil {
				t.Fatal(err)
			}
		case s.refund > 0:
			c, o := earlier(s.refund)
			if err := ms.Refund(ctx, c, []int64{o.m.Charged}); err != nil {
				t.Fatal(err)
			}
			if err := rs.Refund(ctx, c, []int64{o.r.Charged}); err != nil {
				t.Fatal(err)
			}
		case s.release > 0:
			c, o := earlier(s.release)
			if err := ms.Release(ctx, c, []int64{o.m.Lease}); err != nil {
				t.Fatal(err)
			}
			if err := rs.Release(ctx, c, []int64{o.r.Lease}); err != nil {
				t.Fatal(err)
			}
		default:
			checks := []sluice.Check{{Key: key, Limit: limit, Cost: s.cost}}
			a, b := make([]sluice.Status, 1), make([]sluice.Status, 1)
			if err := ms.Apply(ctx, checks, a); err != nil {
				t.Fatal(err)
			}
			if err := rs.Apply(ctx, checks, b); err != nil {
				t.Fatal(err)
			}
			outs[i+1] = got{a[0], b[0]}
			mem, red = a[0], b[0]
		}
	}
	return mem, red
}

// Contract: a Reset before sluice.Epoch, where times are negative µs, is
// dated at its own time on both stores, not at Epoch: the first lease
// taken since is stamped a µs after it and expires after the lease TTL. A
// Concurrency(1, 1s) lease taken after a Reset an hour before Epoch leaves
// its slot free 2 s later on both (the memory store used to date the
// Reset at Epoch and hold the slot for an hour and a second).
func TestAResetBeforeEpochIsDatedAtItsOwnTimeOnBothStores(t *testing.T) {
	start := sluice.Epoch.Add(-time.Hour - time.Second)
	mem, red := playOnBoth(t, start, sluice.Concurrency(1, time.Second).Named("conc"),
		[]bothStep{{cost: 0}, {reset: true}, {cost: 1}, {advance: 2 * time.Second, cost: 1}})
	if mem != red || !mem.Allowed {
		t.Errorf("a lease taken after a Reset before Epoch, 2 s later (want both allowed):\n memory %+v\n redis  %+v", mem, red)
	}
}

// Contract: Reset records the reset of a limit whatever the store held of
// it, a limit the memory store has never decided too, so that the state
// the key builds since is dated after the reset on both stores: a charge
// in the reset's own µs is not refunded (a receipt at or before a reset
// never is), and the first lease is stamped a µs after it.
func TestAResetOfALimitTheStoreNeverDecidedIsRecordedOnBothStores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit sluice.Limit
		steps []bothStep
	}{
		{"a sliding log's charge in the reset's µs is not refunded", sluice.SlidingLog(2, time.Hour).Named("log"),
			[]bothStep{{reset: true}, {cost: 1}, {refund: 2}, {cost: 2}}},
		{"a fixed window's charge in the reset's µs is not refunded", sluice.FixedWindow(2, time.Hour).Named("fw"),
			[]bothStep{{reset: true}, {cost: 1}, {refund: 2}, {cost: 2}}},
		{"a concurrency lease in the reset's µs is stamped after it", sluice.Concurrency(2, time.Hour).Named("conc"),
			[]bothStep{{reset: true}, {cost: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, red := playOnBoth(t, conformance.DefaultStart, tc.limit, tc.steps)
			if mem != red {
				t.Errorf("the stores decide differently:\n memory %+v\n redis  %+v", mem, red)
			}
		})
	}
}
