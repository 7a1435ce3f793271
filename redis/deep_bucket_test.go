package redis_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/conformance"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
)

// A bucket whose deepest debt takes 2^52 µs (about 142 years) or more to
// refill would state waits past 2^53 µs once the clock stepped back, which
// Redis's doubles cannot hold: it is no valid limit, and the memory store
// and the Redis store refuse it alike, as an invalid check.
func TestABucketTooDeepToKeepExactIsRefusedByBothStores(t *testing.T) {
	t.Parallel()
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	for i, l := range []sluice.Limit{
		sluice.TokenBucket(1, time.Duration(1<<20)*time.Microsecond).WithBurst(1<<32 + 1),    // 2^52 + 2^20 µs
		sluice.LeakyBucket(1, time.Duration(1<<31)*time.Microsecond).WithBurst(1<<22 - 1),    // 2^53 - 2^31 µs
		sluice.LeakyBucket(1, sluice.MaxWindow).WithBurst(127).WithMaxWait(sluice.MaxWindow), // 2^52 µs
		sluice.GCRA(1, sluice.MaxWindow).WithBurst(200),
	} {
		t.Run(l.String(), func(t *testing.T) {
			if !errors.Is(l.Err(), sluice.ErrInvalidLimit) {
				t.Errorf("Err() = %v, want an error wrapping ErrInvalidLimit", l.Err())
			}
			// What each store says of a full bucket spent, then asked again
			// after the clock stepped back by about two hours.
			says := func(newStore func(clock *conformance.Clock) sluice.Store) string {
				clock := conformance.NewClock(conformance.DefaultStart)
				store := newStore(clock)
				checks := []sluice.Check{{Key: fmt.Sprintf("deep-%d-%d", i, time.Now().UnixNano()), Limit: l, Cost: l.Burst()}}
				var b []byte
				for _, back := range []time.Duration{0, -6708240129 * time.Microsecond} {
					clock.Advance(back)
					out := make([]sluice.Status, 1)
					if err := store.Apply(ctx, checks, out); err != nil {
						b = fmt.Appendf(b, "invalid=%v; ", errors.Is(err, sluice.ErrInvalidCheck))
					} else {
						b = fmt.Appendf(b, "%+v; ", out[0])
					}
				}
				return string(b)
			}
			mem := says(func(clock *conformance.Clock) sluice.Store {
				s := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
				t.Cleanup(func() { s.Close() })
				return s
			})
			red := says(func(clock *conformance.Clock) sluice.Store {
				return redis.New(client, redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
			})
			if mem != red {
				t.Errorf("memory: %s\nredis:  %s", mem, red)
			}
		})
	}
}
