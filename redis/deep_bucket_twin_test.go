package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A bucket whose deepest debt is exactly 2^53 ticks (3 per 8192 µs is a
// unit of 8192 ticks; a burst of 2^40 is 2^53 ticks) is valid, and the
// Redis store decides it as Limit.Decide does, to the µs. Emptied in one
// check, it misses 2^53 ticks, which refill in ⌈2^53/3⌉ µs: bucket.lua's
// ceildiv takes its a ≥ 2^53 branch there, through floordiv of a negative
// number (arith.lua).
func TestBucketOfExactly2p53TicksMatchesItsGoTwin(t *testing.T) {
	clock := conformance.NewClock(conformance.DefaultStart)
	store := redis.New(redistest.Standalone(t).Client(t), redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
	l := sluice.TokenBucket(3, 8192*time.Microsecond).WithBurst(1 << 40).Named("deep")
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	now := clock.Micros()
	var s sluice.State
	for i, cost := range []int64{1 << 40, 0} {
		next, want, err := l.Decide(s, now, cost)
		if err != nil {
			t.Fatal(err)
		}
		s = next
		out := make([]sluice.Status, 1)
		if err := store.Apply(context.Background(), []sluice.Check{{Key: "deep-2p53", Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		if out[0] != want {
			t.Fatalf("check %d (cost %d): Redis says %+v, Decide says %+v", i, cost, out[0], want)
		}
	}
}
