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

// Contract: a receipt given before a Reset is not refunded into the state
// the key builds since, even when the store's clock stepped back before the
// reset (NTP, or a failover to a master whose clock is a little behind):
// the reset is recorded no earlier than the times the deleted state
// records, and a step back never creates capacity. FixedWindow(2, 24h):
// a charge at T, the clock back 5 µs, a Reset, two requests fill the fresh
// state, the old receipt is refunded: a third request is refused, on Redis
// as on the memory store.
func TestAReceiptFromBeforeAResetBehindASteppedBackClockRefundsNothing(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	l := sluice.FixedWindow(2, 24*time.Hour).Named("daily")
	key := fmt.Sprintf("reset-stepback-%d", time.Now().UnixNano())
	one := func(cost int64) []sluice.Check { return []sluice.Check{{Key: key, Limit: l, Cost: cost}} }
	type store interface {
		sluice.Store
		sluice.Refunder
	}
	run := func(name string, s store, clock *conformance.Clock, reset func()) int {
		st := make([]sluice.Status, 1)
		if err := s.Apply(ctx, one(1), st); err != nil || !st[0].Allowed {
			t.Fatalf("%s: %v %+v", name, err, st[0])
		}
		old := st[0].Charged
		clock.Advance(-5 * time.Microsecond)
		reset()
		clock.Advance(time.Microsecond)
		admitted := 0
		for range 2 {
			if err := s.Apply(ctx, one(1), st); err != nil {
				t.Fatal(err)
			}
			if st[0].Allowed {
				admitted++
			}
		}
		if err := s.Refund(ctx, one(1), []int64{old}); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, one(1), st); err != nil {
			t.Fatal(err)
		}
		if st[0].Allowed {
			admitted++
		}
		return admitted
	}
	mc := conformance.NewClock(conformance.DefaultStart)
	mem := memory.New(memory.WithClock(mc.Now), memory.WithSweepInterval(0))
	defer mem.Close()
	m := run("memory", mem, mc, func() { mem.Reset(key, []sluice.Limit{l}) })
	rc := conformance.NewClock(conformance.DefaultStart)
	red := redis.New(client, redis.WithTimeForTesting(rc.Now), redis.WithTimeout(10*time.Second))
	r := run("redis", red, rc, func() {
		if _, err := red.Reset(ctx, key, []sluice.Limit{l}); err != nil {
			t.Fatal(err)
		}
	})
	if m != 2 {
		t.Errorf("memory admitted %d since the reset in a window of 2", m)
	}
	if r != 2 {
		t.Errorf("redis admitted %d since the reset in a window of 2 (memory %d): the refund of a receipt from "+
			"before the reset freed a unit of the fresh state", r, m)
	}
}
