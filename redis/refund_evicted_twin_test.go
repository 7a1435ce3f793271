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

// Contract: a receipt given before the key's state was evicted (the memory
// store's bound; on Redis, maxmemory eviction, here a DEL) is not refunded
// into the state the key counts afresh since, and both stores then agree
// on its count (sluice.Refunder). FixedWindow(10, 24h): x charged 1 at T,
// evicted, charged 3 afresh at T+1µs in the same window, the receipt T
// refunded: 7 remaining in both stores.
func TestARefundFromBeforeAnEvictionLeavesTheFreshStateAloneInBothStores(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	ctx := context.Background()
	l := sluice.FixedWindow(10, 24*time.Hour).Named("daily")
	key := fmt.Sprintf("evicted-refund-%d", time.Now().UnixNano())
	x := func(cost int64) []sluice.Check { return []sluice.Check{{Key: key, Limit: l, Cost: cost}} }

	// memory: one shard holding one unit, so that a second key evicts x.
	mc := conformance.NewClock(conformance.DefaultStart)
	mem := memory.New(memory.WithClock(mc.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1), memory.WithShards(1))
	defer mem.Close()
	st := make([]sluice.Status, 1)
	if err := mem.Apply(ctx, x(1), st); err != nil || !st[0].Allowed {
		t.Fatalf("memory: %v %+v", err, st[0])
	}
	mReceipt := st[0].Charged
	if err := mem.Apply(ctx, []sluice.Check{{Key: key + "-other", Limit: l, Cost: 1}}, st); err != nil {
		t.Fatal(err)
	}
	mc.Advance(time.Microsecond)
	if err := mem.Apply(ctx, x(3), st); err != nil || !st[0].Allowed || st[0].Remaining != 7 {
		t.Fatalf("memory: x was not counted afresh: %v %+v", err, st[0])
	}
	if err := mem.Refund(ctx, x(1), []int64{mReceipt}); err != nil {
		t.Fatal(err)
	}
	if err := mem.Apply(ctx, x(0), st); err != nil {
		t.Fatal(err)
	}
	memRemaining := st[0].Remaining

	// Redis: the same calls at the same instants, x's key deleted where
	// the memory store evicted it.
	rc := conformance.NewClock(conformance.DefaultStart)
	red := redis.New(client, redis.WithTimeForTesting(rc.Now), redis.WithTimeout(10*time.Second))
	if err := red.Apply(ctx, x(1), st); err != nil || !st[0].Allowed {
		t.Fatalf("redis: %v %+v", err, st[0])
	}
	rReceipt := st[0].Charged
	if rReceipt != mReceipt {
		t.Fatalf("receipts differ: memory %d, redis %d", mReceipt, rReceipt)
	}
	srv.MustDo("DEL", redis.Key(key, l.ID()))
	rc.Advance(time.Microsecond)
	if err := red.Apply(ctx, x(3), st); err != nil || !st[0].Allowed || st[0].Remaining != 7 {
		t.Fatalf("redis: x was not counted afresh: %v %+v", err, st[0])
	}
	if err := red.Refund(ctx, x(1), []int64{rReceipt}); err != nil {
		t.Fatal(err)
	}
	if err := red.Apply(ctx, x(0), st); err != nil {
		t.Fatal(err)
	}
	redRemaining := st[0].Remaining
	if memRemaining != 7 {
		t.Errorf("memory: %d remaining after a refund of a receipt from before the eviction, want 7: "+
			"the fresh state never counted it", memRemaining)
	}
	if memRemaining != redRemaining {
		t.Errorf("after a refund of a receipt from before an eviction: memory leaves %d remaining, redis %d", memRemaining, redRemaining)
	}
}
