package overlimit

import (
	"math/bits"

	"github.com/sluice-dev/sluice"
)

// remainingAt returns the units a check of limit l holds at now, as the
// store would state them, when the store refused cost of it with remaining
// units left and said it would be full at resetAt (times in ns since the
// cache's base). Capacity only comes back with time, so remaining is a
// lower bound, and exact for a fixed window until its end. A bucket
// (token, leaky, GCRA) refills at Quantity per Window: it lacks
// ⌈(resetAt-now)·Q/W⌉ units of Burst at now, which is exact on the
// store's microsecond grid. The result is below cost: a refused check
// cannot use what it holds.
func remainingAt(l sluice.Limit, cost, remaining, resetAt, now int64) int64 {
	switch l.Algorithm() {
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA:
		if lacking, ok := ceilMulDiv(max(resetAt-now, 0), l.Quantity(), int64(l.Window())); ok && lacking < l.Burst() {
			remaining = max(remaining, l.Burst()-lacking)
		}
	}
	return max(min(remaining, cost-1), 0)
}

// ceilMulDiv returns ⌈a·b/c⌉ for a, b ≥ 0 and c > 0, and false when that
// does not fit in an int64.
func ceilMulDiv(a, b, c int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, false
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if r != 0 {
		q++
	}
	if q > 1<<63-1 {
		return 0, false
	}
	return int64(q), true
}
