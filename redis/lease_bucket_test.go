package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A bucket's lease is spent up to L after its take, while the shared
// bucket refills: what refills in L is held back from the shared burst, so
// that another instance draining the bucket meanwhile and the lease spent
// at its end together stay within the bucket's promise. (Without the
// hold-back, the replay refuses the lease's last units: the shared bucket
// had refilled to full while they were unspent.)
func TestLeasedBucketHoldsBackWhatRefillsInItsLease(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	ctx := context.Background()
	for _, limit := range []sluice.Limit{
		sluice.TokenBucket(100, time.Second).WithBurst(40),
		sluice.GCRA(100, time.Second).WithBurst(40),
		sluice.LeakyBucket(100, time.Second).WithBurst(40),
	} {
		t.Run(limit.Algorithm().String(), func(t *testing.T) {
			clock := &fleetClock{}
			clock.us.Store(1 << 36)
			fleet := make([]*redis.Leased, 2)
			for i := range fleet {
				st := redis.New(client, redis.WithTimeForTesting(clock.now), redis.WithTimeout(testTimeout))
				fleet[i] = redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: time.Hour})
				t.Cleanup(func() { fleet[i].Close() })
			}
			key := "hold-" + limit.Algorithm().String()
			var adm []admission
			spend := func(l *redis.Leased, calls int) {
				for range calls {
					out := make([]sluice.Status, 1)
					if err := l.Apply(ctx, []sluice.Check{{Key: key, Limit: limit, Cost: 1}}, out); err != nil {
						t.Fatal(err)
					}
					if out[0].Allowed {
						adm = append(adm, admission{clock.us.Load(), 1})
					}
				}
			}
			spend(fleet[0], 2) // the first is exact, the second takes a lease
			settled(t, fleet[0])
			clock.us.Add(90_000)
			spend(fleet[1], 60) // drains what the shared bucket has
			spend(fleet[0], 10) // the lease, near its end
			if s := fleet[0].Stats(); s.Spent < 5 {
				t.Fatalf("the first instance spent %d units of leases, want its lease spent: %+v", s.Spent, s)
			}
			if bad, ok := replayAdmits(limit, adm); !ok {
				t.Fatalf("the fleet admitted %d units at %d that one exact limiter refuses (admitted: %v)", bad.cost, bad.at, adm)
			}
		})
	}
}
