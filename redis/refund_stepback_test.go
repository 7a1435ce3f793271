package redis_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// refunder is a store that takes refunds, as both stores of the module are.
type refunder interface {
	sluice.Store
	sluice.Refunder
}

// Contract (sluice.Refunder, doc.go): a refund never reaches a state
// created since a state that counted the receipt was evicted, and a clock
// that steps back creates no capacity; the stores decide alike.
// FixedWindow(10, 24h): x charged 1 at T (receipt T), its state evicted
// (memory: by a second key at a store of one unit; Redis: maxmemory, here
// a DEL), the clock steps back an hour and x is charged 10 afresh in the
// same day, the clock moves past T and receipt T is refunded. The fresh
// state never counted it: x stays at 0 remaining and refuses. Redis's
// fresh state was created (born) before T, but has decided nothing at or
// after T (latest), so the receipt is not its own.
func TestARefundAfterAnEvictionBehindASteppedBackClockLeavesTheFreshStateAlone(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	ctx := context.Background()
	l := sluice.FixedWindow(10, 24*time.Hour).Named("daily")
	key := fmt.Sprintf("evicted-stepback-%d", time.Now().UnixNano())
	x := func(cost int64) []sluice.Check { return []sluice.Check{{Key: key, Limit: l, Cost: cost}} }

	run := func(name string, s refunder, clock *conformance.Clock, evict func()) bool {
		t.Helper()
		st := make([]sluice.Status, 1)
		if err := s.Apply(ctx, x(1), st); err != nil || !st[0].Allowed {
			t.Fatalf("%s: %v %+v", name, err, st[0])
		}
		receipt := st[0].Charged
		evict()
		clock.Advance(-time.Hour)
		if err := s.Apply(ctx, x(10), st); err != nil || !st[0].Allowed || st[0].Remaining != 0 {
			t.Fatalf("%s: x was not counted afresh: %v %+v", name, err, st[0])
		}
		clock.Advance(time.Hour + time.Second)
		if err := s.Refund(ctx, x(1), []int64{receipt}); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, x(1), st); err != nil {
			t.Fatal(err)
		}
		return st[0].Allowed
	}
	mc := conformance.NewClock(conformance.DefaultStart)
	mem := memory.New(memory.WithClock(mc.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1), memory.WithShards(1))
	defer mem.Close()
	memAllowed := run("memory", mem, mc, func() {
		if err := mem.Apply(ctx, []sluice.Check{{Key: key + "-other", Limit: l, Cost: 1}}, make([]sluice.Status, 1)); err != nil {
			t.Fatal(err)
		}
	})
	rc := conformance.NewClock(conformance.DefaultStart)
	red := redis.New(client, redis.WithTimeForTesting(rc.Now), redis.WithTimeout(10*time.Second))
	redAllowed := run("redis", red, rc, func() { srv.MustDo("DEL", redis.Key(key, l.ID())) })

	if memAllowed {
		t.Errorf("memory: an 11th unit admitted in a day of 10 counted afresh: a receipt from before the eviction was refunded into the fresh state")
	}
	if redAllowed {
		t.Errorf("redis: an 11th unit admitted in a day of 10 counted afresh: a receipt from before the eviction " +
			"was refunded into the state created an hour before it by a clock that stepped back")
	}
}

// Contract (sluice.Refunder, Store.Reset): a receipt given before a Reset
// is not refunded into the state the key counts since, even when the
// clock stepped back below the reset state's creation and window start
// before the reset. FixedWindow(10, 24h), a day starting at T0: x charged
// at T0 and at T0+2h (receipt R), the clock steps back to T0-1m and x is
// reset, then charged 9 afresh at T0+1h and 1 at T0+3h, and R is
// refunded: x refuses, on Redis as on the memory store. Redis dates the
// reset no earlier than the latest decision the deleted state records
// (R), not only its creation and window start (T0).
func TestAReceiptAheadOfAResetBehindASteppedBackClockRefundsNothing(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	l := sluice.FixedWindow(10, 24*time.Hour).Named("daily")
	key := fmt.Sprintf("reset-ahead-%d", time.Now().UnixNano())
	x := func(cost int64) []sluice.Check { return []sluice.Check{{Key: key, Limit: l, Cost: cost}} }
	day := conformance.DefaultStart.Truncate(24 * time.Hour).Add(24 * time.Hour)

	run := func(name string, s refunder, clock *conformance.Clock, reset func()) bool {
		t.Helper()
		st := make([]sluice.Status, 1)
		charge := func(cost, remaining int64) {
			t.Helper()
			if err := s.Apply(ctx, x(cost), st); err != nil || !st[0].Allowed || remaining >= 0 && st[0].Remaining != remaining {
				t.Fatalf("%s at %v: %v %+v", name, clock.Now(), err, st[0])
			}
		}
		clock.Advance(day.Sub(clock.Now()))
		charge(1, -1)
		clock.Advance(2 * time.Hour)
		charge(1, -1)
		receipt := st[0].Charged
		clock.Advance(-2*time.Hour - time.Minute)
		reset()
		clock.Advance(time.Hour + time.Minute)
		charge(9, 1)
		clock.Advance(2 * time.Hour)
		charge(1, 0)
		if err := s.Refund(ctx, x(1), []int64{receipt}); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, x(1), st); err != nil {
			t.Fatal(err)
		}
		return st[0].Allowed
	}
	mc := conformance.NewClock(conformance.DefaultStart)
	mem := memory.New(memory.WithClock(mc.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	memAllowed := run("memory", mem, mc, func() { mem.Reset(key, []sluice.Limit{l}) })
	rc := conformance.NewClock(conformance.DefaultStart)
	red := redis.New(client, redis.WithTimeForTesting(rc.Now), redis.WithTimeout(10*time.Second))
	redAllowed := run("redis", red, rc, func() {
		if _, err := red.Reset(ctx, key, []sluice.Limit{l}); err != nil {
			t.Fatal(err)
		}
	})
	if memAllowed {
		t.Errorf("memory: an 11th unit admitted in a window of 10 counted since the reset")
	}
	if redAllowed {
		t.Errorf("redis: an 11th unit admitted in a window of 10 counted since the reset: a receipt from before it, " +
			"ahead of the state's creation and window start, was refunded into the fresh state")
	}
}

// A state an earlier version wrote, which records its creation (born) but
// no latest decision, takes the refunds of the receipts it gave; once
// decided behind a clock that stepped back into its window, it records
// that window's start, the receipt it gives, as its latest, and takes
// that receipt's refund too. FixedWindow(2, 1h) of an hour starting at H:
// the earlier form full, one of its units counted at H+5m and refunded at
// H+10m; a charge at H-1m (receipt H, the window's start), refunded: one
// more unit is admitted.
func TestAStateOfTheEarlierFormTakesRefunds(t *testing.T) {
	srv := redistest.Standalone(t)
	ctx := context.Background()
	l := sluice.FixedWindow(2, time.Hour).Named("hourly")
	key := fmt.Sprintf("earlier-form-%d", time.Now().UnixNano())
	x := func(cost int64) []sluice.Check { return []sluice.Check{{Key: key, Limit: l, Cost: cost}} }
	hour := conformance.DefaultStart.Truncate(time.Hour).Add(time.Hour)
	h := sluice.MicrosSinceEpoch(hour)
	packed := func(vs ...int64) string {
		b := make([]byte, 0, 8*len(vs))
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(v)))
		}
		return string(b)
	}
	// g and ":", "@", born, "|", then t, a and b.
	srv.MustDo("SET", redis.Key(key, l.ID()), "1:@"+packed(h+time.Minute.Microseconds())+"|"+packed(h, 2, 0), "PX", "7200000")

	clock := conformance.NewClock(hour.Add(10 * time.Minute))
	red := redis.New(srv.Client(t), redis.WithTimeForTesting(clock.Now), redis.WithTimeout(10*time.Second))
	if err := red.Refund(ctx, x(1), []int64{h + 5*time.Minute.Microseconds()}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(-11 * time.Minute)
	st := make([]sluice.Status, 1)
	if err := red.Apply(ctx, x(1), st); err != nil || !st[0].Allowed || st[0].Charged != h {
		t.Fatalf("%v %+v; want admitted with the receipt %d: the earlier form's receipt was not refunded", err, st[0], h)
	}
	if err := red.Refund(ctx, x(1), []int64{st[0].Charged}); err != nil {
		t.Fatal(err)
	}
	if err := red.Apply(ctx, x(1), st); err != nil {
		t.Fatal(err)
	}
	if !st[0].Allowed {
		t.Error("the refund of a receipt given ahead of a clock that stepped back into the window freed nothing")
	}
}
