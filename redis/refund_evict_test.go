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

// A receipt from a state that Redis then lost (evicted to make room, or
// deleted) is not refunded to the state created since, which never counted
// it: the refund took its units out of what the new state counted for other
// calls, and one more was admitted than the limit allows. A receipt of the
// state that is there now is refunded as usual.
func TestARefundFromAnEvictedStateTakesNothingBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(3, time.Hour).Named("fw"),
		sluice.SlidingCounter(3, time.Hour).Named("sc"),
		sluice.SlidingLog(3, time.Hour).Named("log"),
	} {
		t.Run(limit.Name(), func(t *testing.T) {
			clock := conformance.NewClock(conformance.DefaultStart)
			store := redis.New(srv.Client(t), redis.WithTimeForTesting(clock.Now), redis.WithTimeout(testTimeout))
			ctx := context.Background()
			c := []sluice.Check{{Key: "evicted-" + limit.Name(), Limit: limit, Cost: 1}}
			out := make([]sluice.Status, 1)
			spend := func() bool {
				t.Helper()
				clock.Advance(time.Millisecond)
				if err := store.Apply(ctx, c, out); err != nil {
					t.Fatal(err)
				}
				return out[0].Allowed
			}
			if !spend() || out[0].Charged == 0 {
				t.Fatalf("before the eviction: %+v; want admitted with a receipt", out[0])
			}
			old := out[0].Charged

			srv.MustDo("DEL", redis.Key(c[0].Key, limit.ID())) // as an eviction does
			admitted := 0
			var last int64
			for range 3 {
				if spend() {
					admitted++
					last = out[0].Charged
				}
			}
			if err := store.Refund(ctx, c, []int64{old}); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if spend() {
					admitted++
				}
			}
			if admitted != 3 {
				t.Errorf("%d admitted after the state was evicted, for a limit of 3: a receipt from the evicted state was refunded to the new one", admitted)
			}
			if err := store.Refund(ctx, c, []int64{last}); err != nil {
				t.Fatal(err)
			}
			if !spend() {
				t.Error("a receipt of the state there now was not refunded")
			}
		})
	}
}

// A lease taken from a state that Redis then lost (evicted, deleted) was
// counted by that state alone: its unspent units, given back afterwards,
// are not taken out of the state created since. Given back, they let the
// instances admit more than the limit.
func TestALeaseGivenBackAfterAnEvictionDoesNotAddToTheNewState(t *testing.T) {
	t.Parallel()
	for _, limit := range []sluice.Limit{
		sluice.FixedWindow(100, 400*24*time.Hour).Named("fw"),
		sluice.SlidingCounter(100, 400*24*time.Hour).Named("sc"),
		sluice.TokenBucket(100, 400*24*time.Hour).Named("tb"),
	} {
		t.Run(limit.Name(), func(t *testing.T) {
			t.Parallel()
			srv, a, b, c, before := leasesHeld(t, limit, "evicted", "the eviction")

			srv.MustDo("DEL", redis.Key(c.Key, limit.ID())) // as an eviction does
			admitted := spendN(t, b, c, 200)
			if err := a.Leases().Return(context.Background()); err != nil {
				t.Fatal(err)
			}
			if lost := a.Leases().Stats().Lost - before.Lost; lost != before.Held {
				t.Errorf("%d of the %d units a held from the evicted state counted lost", lost, before.Held)
			}
			admitted += spendN(t, a, c, 200)
			if max := int(limit.Burst()); admitted > max {
				t.Errorf("the instances admitted %d after the eviction, for a limit of %d: a's lease of %d units, taken before it, was given back to the new state",
					admitted, max, before.Held)
			}
		})
	}
}
