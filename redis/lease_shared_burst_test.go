package redis_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// TestALeasedBucketRefusesACostAboveItsSharedBurstAsAboveABurst: a leased
// bucket's shared state decides every check with its burst less its
// hold-back, B − h (leasehold.Of; the package documentation,
// Leased quota). The contract: a check whose cost is above B − h, though
// not above B, is refused as a cost above a limit's burst is — RetryAfter
// sluice.Never, nothing consumed — in one round trip, without a take that
// could only be refused first; it is not decided by the full burst, which
// would let the fleet spend B + h within an instant (see leaseEntry.beyond).
// A cost of B − h is admitted. (Near exhaustion a take decides the cost
// alone and refuses it itself, as for the GCRA here; a take of cost and
// lease together, as for the large bucket, was refused first and the call
// decided again: two round trips.) Configuration refuses such costs at
// load (config.TestALeasedBucketCostAboveItsSharedBurstIsRefusedAtLoad).
func TestALeasedBucketRefusesACostAboveItsSharedBurstAsAboveABurst(t *testing.T) {
	srv := redistest.Standalone(t)
	g := openLeased(t, srv, redis.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		limit sluice.Limit
	}{
		{"a GCRA of burst 10 holds back 2", sluice.GCRA(10, time.Minute).WithBurst(10).Named("per-minute")},
		{"a token bucket of burst 1000 holds back 250", sluice.TokenBucket(1000, time.Minute).WithBurst(1000).Named("tb")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared, _, ok := leasehold.Of(tc.limit, redis.DefaultLeaseMaxAge)
			if !ok {
				t.Fatalf("%s is not leased", tc.limit)
			}
			sb := shared.Burst()
			for _, cost := range []int64{sb + 1, tc.limit.Burst()} {
				key := tc.limit.Name() + "-" + strconv.FormatInt(cost, 10)
				before := g.Leases().Stats().RoundTrips
				out := make([]sluice.Status, 1)
				if err := g.Apply(ctx, []sluice.Check{{Key: key, Limit: tc.limit, Cost: cost}}, out); err != nil {
					t.Fatal(err)
				}
				if out[0].Allowed || out[0].RetryAfter != sluice.Never {
					t.Errorf("cost %d of a shared burst of %d: %+v, want refused with RetryAfter Never", cost, sb, out[0])
				}
				if n := g.Leases().Stats().RoundTrips - before; n != 1 {
					t.Errorf("cost %d of a shared burst of %d: %d round trips, want 1", cost, sb, n)
				}
				// Nothing was consumed: the whole shared burst is there.
				if err := g.Apply(ctx, []sluice.Check{{Key: key, Limit: tc.limit, Cost: sb}}, out); err != nil {
					t.Fatal(err)
				}
				if !out[0].Allowed {
					t.Errorf("after the refusal of cost %d, a cost of the shared burst %d is refused: %+v", cost, sb, out[0])
				}
			}
		})
	}
}
