// Package leasehold says how a bucket is decided while instances lease its
// units (the Redis store's leased quota): the burst its shared state keeps
// and how long a lease lives. The Redis store leases by it, and
// configuration refuses by it the costs such a bucket can never admit, so
// that the two never disagree.
package leasehold

import (
	"math/bits"
	"time"

	"github.com/sluice-dev/sluice"
)

// DefaultMaxAge is a lease's longest life when none is configured.
const DefaultMaxAge = time.Minute

// minLeaseLife is the shortest life worth a bucket's lease, in µs: a lease
// that ends before its take's reply could arrive saves nothing.
const minLeaseLife = 1000

// Of returns how a bucket, l, (token bucket, GCRA, leaky-bucket
// meter) is decided when instances lease its units — take them from the
// shared state at once and spend them later from memory, as the Redis
// store's leased quota does (package redis, Leased quota) — with leases
// living at most maxAge:
//
//   - life is how long a unit counted by the shared state may then be
//     spent: the time a quarter of the burst (at least one unit) takes to
//     refill, at most maxAge, truncated to whole microseconds;
//   - shared is the limit the shared state decides every check of l by:
//     l with its burst less the hold-back h = ⌈life·Quantity/Window⌉, what
//     refills in life. A unit spent up to life after it was counted moves
//     an admission later by up to life; holding back what refills in that
//     time keeps what the fleet spends in any span d within Burst + d·Q/W,
//     the bucket's own promise.
//
// A check whose cost exceeds shared's burst is never admitted while l is
// leased so, though l admits it on a full bucket.
//
// ok is false, and l is decided per request, for a limit not leased so:
// one that is not valid, a shadow, not a bucket, a leaky-bucket queue
// (MaxWait), a burst under 2, a life under a millisecond, or a hold-back
// that would leave no burst.
func Of(l sluice.Limit, maxAge time.Duration) (shared sluice.Limit, life time.Duration, ok bool) {
	switch l.Algorithm() {
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA, sluice.AlgorithmLeakyBucket:
	default:
		return sluice.Limit{}, 0, false
	}
	b := l.Burst()
	if l.Err() != nil || l.Shadow() || l.MaxWait() > 0 || b < 2 {
		return sluice.Limit{}, 0, false
	}
	age := max(int64(maxAge/time.Microsecond), 1)
	q, w := l.Quantity(), int64(l.Window()/time.Microsecond)
	us := min(mulDivSat(max(b/4, 1), w, q, false), age)
	if us < minLeaseLife {
		return sluice.Limit{}, 0, false
	}
	hold := mulDivSat(us, q, w, true)
	if hold < 1 || hold >= b {
		return sluice.Limit{}, 0, false
	}
	shared = l.WithBurst(b - hold)
	if shared.Err() != nil {
		return sluice.Limit{}, 0, false
	}
	return shared, time.Duration(us) * time.Microsecond, true
}

// mulDivSat returns a·b/c for positive a, b, c, rounded down (up when
// ceil), saturating at 2^62.
func mulDivSat(a, b, c int64, ceil bool) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 1 << 62
	}
	quo, rem := bits.Div64(hi, lo, uint64(c))
	if ceil && rem != 0 {
		quo++
	}
	return int64(min(quo, 1<<62))
}
