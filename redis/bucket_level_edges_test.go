package redis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// A token bucket state in the form earlier versions wrote (b = 0: a ticks
// missing at t) is full again exactly when ⌈a/rq⌉ µs have passed since t,
// and then holds its burst, no more: the refill stops at full
// (internal/algo levelLoad: "Refilled when elapsed ≥ ⌈missing/RQ⌉";
// bucket.lua's header: the earlier form "is read as they read it"). With
// 2,000,000 per second a unit is one tick and 2 ticks refill per µs, so
// 3 ticks missing are back after ⌈3/2⌉ = 2 µs, not 1.5 µs's worth plus
// half a tick more.
func TestAnEarlierFormBucketIsFullNoFullerAtTheCeilOfItsRefill(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store := New(srv.Client(t), WithTimeForTesting(func() time.Time { return now }), WithTimeout(testTimeout))
	l := sluice.TokenBucket(2_000_000, time.Second).Named("tb2") // rq = 2, rw = 1
	last := sluice.MicrosSinceEpoch(now) - 2                     // 3 ticks missing 2 µs ago
	srv.MustDo("SET", Key("u", "tb2"), "4 "+strconv.FormatInt(last, 10)+" 3 0", "PX", "100000000")

	out := make([]sluice.Status, 1)
	peek := []sluice.Check{{Key: "u", Limit: l, Cost: 0}}
	if err := store.Apply(context.Background(), peek, out); err != nil {
		t.Fatal(err)
	}
	if got := out[0]; !got.Allowed || got.Remaining != 2_000_000 || got.ResetAfter != 0 {
		t.Errorf("peek: %+v, want allowed with the burst, 2000000, left and full now", got)
	}
	take := []sluice.Check{{Key: "u", Limit: l, Cost: 1}}
	if err := store.Apply(context.Background(), take, out); err != nil {
		t.Fatal(err)
	}
	// Full, less the one tick just taken, which refills in ⌈1/2⌉ = 1 µs.
	if got := out[0]; !got.Allowed || got.Remaining != 1_999_999 || got.ResetAfter != time.Microsecond {
		t.Errorf("take: %+v, want allowed with 1999999 left, full again in 1µs", got)
	}
}

// An earlier-form token bucket state that misses more than a full bucket
// (written under a larger burst, say) is read clamped to a full bucket's
// debt: internal/algo's bucketLoad, "for a state in the earlier token and
// leaky form, clamped to [0, limit]", which bucket.lua's load twins. So
// 20 units missing under 10 per hour read as 10 missing: empty, full again
// in an hour, and a unit back in 6 minutes.
func TestAnEarlierFormBucketMissingMoreThanItsBurstReadsAsEmpty(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store := New(srv.Client(t), WithTimeForTesting(func() time.Time { return now }), WithTimeout(testTimeout))
	l := sluice.TokenBucket(10, time.Hour).Named("tb10") // a unit is 360e6 ticks, 1 refilling per µs
	const unit = 360_000_000
	srv.MustDo("SET", Key("u", "tb10"), "4 "+strconv.FormatInt(sluice.MicrosSinceEpoch(now), 10)+" "+strconv.FormatInt(20*unit, 10)+" 0", "PX", "100000000")

	out := make([]sluice.Status, 1)
	if err := store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l, Cost: 0}}, out); err != nil {
		t.Fatal(err)
	}
	if got := out[0]; !got.Allowed || got.Remaining != 0 || got.ResetAfter != time.Hour {
		t.Errorf("peek: %+v, want allowed with 0 left, full again in 1h", got)
	}
	if err := store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l, Cost: 1}}, out); err != nil {
		t.Fatal(err)
	}
	if got := out[0]; got.Allowed || got.RetryAfter != 6*time.Minute || got.ResetAfter != time.Hour {
		t.Errorf("take: %+v, want refused, retry in 6m, full again in 1h", got)
	}
}
