package leasehold_test

import (
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/leasehold"
)

// TestOf: a leased bucket's lease lives the time a quarter of
// its burst takes to refill, at most maxAge, and its shared state decides
// every check with the burst less what refills in that life, rounded up;
// a limit that is not a bucket, or whose burst or life leaves no hold-back
// worth a lease, is not leased.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		name   string
		limit  sluice.Limit
		maxAge time.Duration
		burst  int64 // the shared burst; 0: not leased
		life   time.Duration
	}{
		{"a GCRA of 10 a minute, burst 10, holds back 2", sluice.GCRA(10, time.Minute).WithBurst(10), time.Minute, 8, 12 * time.Second},
		{"a quarter of a token bucket's burst", sluice.TokenBucket(1000, time.Minute), time.Minute, 750, 15 * time.Second},
		{"a life capped by maxAge holds back what refills in it", sluice.TokenBucket(1000, time.Minute), time.Second, 983, time.Second},
		{"a burst of 2 or 3 holds back one unit's refill", sluice.GCRA(3, time.Second).WithBurst(3), time.Minute, 2, 333333 * time.Microsecond},
		{"a leaky-bucket meter", sluice.LeakyBucket(100, time.Second), time.Minute, 75, 250 * time.Millisecond},
		{"a burst of 1", sluice.GCRA(10, time.Minute).WithBurst(1), time.Minute, 0, 0},
		{"a life under a millisecond", sluice.TokenBucket(1_000_000, time.Second).WithBurst(2), time.Minute, 0, 0},
		{"a leaky-bucket queue", sluice.LeakyBucket(100, time.Second).WithMaxWait(time.Second), time.Minute, 0, 0},
		{"a shadow", sluice.GCRA(10, time.Minute).WithBurst(10).WithShadow(true), time.Minute, 0, 0},
		{"a fixed window", sluice.FixedWindow(10, time.Minute), time.Minute, 0, 0},
		{"a sliding log", sluice.SlidingLog(10, time.Minute), time.Minute, 0, 0},
	} {
		shared, life, ok := leasehold.Of(c.limit, c.maxAge)
		if ok != (c.burst > 0) || ok && (shared.Burst() != c.burst || life != c.life) {
			t.Errorf("%s: %s leased with maxAge %v: shared burst %d, life %v, ok %v; want %d, %v",
				c.name, c.limit, c.maxAge, shared.Burst(), life, ok, c.burst, c.life)
			continue
		}
		if ok && (shared.Quantity() != c.limit.Quantity() || shared.Window() != c.limit.Window() || shared.ID() != c.limit.ID()) {
			t.Errorf("%s: shared %s is not %s with another burst", c.name, shared, c.limit)
		}
	}
}
