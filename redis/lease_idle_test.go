package redis_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// A lease left unused for LeaseOptions.Idle goes back only when its units
// could matter to another instance: when the shared remainder as last
// heard is scarce, or when a lease its size on every instance would hold
// more than 1% of the limit. A lease of a limit with plenty left is kept
// until it ends.
func TestLeasedIdleLeaseGoesBackOnlyWhenItsUnitsCouldMatter(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	st := redis.New(srv.Client(t), redis.WithTimeout(testTimeout))
	one := redis.NewLeased(st, st, 2, redis.LeaseOptions{Mode: redis.LeaseAuto, Idle: 20 * time.Millisecond})
	t.Cleanup(func() { one.Close() })

	// Each first call takes 1 + 8 units (a first take is sized from the
	// burst: 8 is under its share, burst ÷ 4).
	plenty := sluice.Check{Key: "plenty", Limit: sluice.FixedWindow(1_000_000, time.Hour), Cost: 1}
	spendN(t, one, plenty, 1) // 8 held: 8 × 2 instances is under 1% of 1,000,000
	large := sluice.Check{Key: "large", Limit: sluice.FixedWindow(1000, time.Hour), Cost: 1}
	spendN(t, one, large, 1) // 8 × 2 is over 1% of 1,000
	scarce := sluice.Check{Key: "scarce", Limit: sluice.FixedWindow(100_000, time.Hour), Cost: 1}
	drain := scarce
	drain.Cost = 99_970
	spendN(t, st, drain, 1)
	spendN(t, one, scarce, 1) // one hears 21 left: its share, 21 ÷ 4, is under the 8 it asks
	if s := settled(t, one); s.Leases != 3 || s.Leased != 24 {
		t.Fatalf("three first calls took %d leases of %d units in all, want 3 of 8: %+v", s.Leases, s.Leased, s)
	}

	want := map[sluice.Check]int64{plenty: 1_000_000 - 9, large: 1000 - 1, scarce: 30 - 1}
	deadline := time.Now().Add(5 * time.Second)
	for {
		back := true
		for c, left := range want {
			back = back && peek(t, srv, c) == left
		}
		if back {
			break
		}
		if time.Now().After(deadline) {
			for c, left := range want {
				if got := peek(t, srv, c); got != left {
					t.Errorf("%s: %d left in Redis 5 s after its call, want %d", c.Key, got, left)
				}
			}
			t.FailNow()
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // ten Idle more
	if got := peek(t, srv, plenty); got != want[plenty] {
		t.Errorf("plenty: %d left in Redis, want its lease kept (%d)", got, want[plenty])
	}
	if s := one.Stats(); s.Held != 8 || s.Returned != 16 {
		t.Errorf("%d units held and %d returned, want plenty's 8 held and the others' 16 returned: %+v", s.Held, s.Returned, s)
	}
}
