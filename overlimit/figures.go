package overlimit

import (
	"math"
	"math/bits"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
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

// answer writes to out the statuses of a call the cache refuses at now
// without asking the store, from what it remembers of each check (looks):
// see Cache for what each check is told.
func answer(checks []sluice.Check, looks []lookup, out []sluice.Status, now int64) {
	for i := range checks {
		out[i] = sluice.Status{Allowed: true, Undecided: true}
		if checks[i].Cost > checks[i].Limit.Burst() {
			out[i] = sluice.Status{RetryAfter: sluice.Never} // refused whatever its state
		} else if l := &looks[i]; l.known && !l.matches {
			out[i] = fitsAt(checks[i].Limit, checks[i].Cost, l, now)
		}
		if l := &looks[i]; l.matches {
			// A full limit admits any cost up to Burst: never later than resetAt.
			retry := ceilMicro(min(retryAtCost(checks[i].Limit, l.cost, checks[i].Cost, l.retryAt), l.resetAt) - now)
			out[i] = sluice.Status{
				Remaining:  remainingAt(checks[i].Limit, l.cost, l.remaining, l.resetAt, now),
				RetryAfter: retry,
				ResetAfter: max(ceilMicro(l.resetAt-now), retry),
			}
			if checks[i].Cost > checks[i].Limit.Burst() {
				out[i].RetryAfter = sluice.Never // as the store would say
			}
		}
	}
}

// fitsAt returns the status the store would give at now, as a peek, of a
// check of cost of limit l beside a refusal, from what the cache remembers
// of it (k: known, and no refusal of this cost): its units, counted as
// remainingAt counts
// them, all of Burst once resetAt has passed, and the time until then. When
// those do not cover cost, the store would refuse the check after a wait
// the cache does not know: the check is reported Undecided.
func fitsAt(l sluice.Limit, cost int64, k *lookup, now int64) sluice.Status {
	capped := k.cost
	if capped == 0 { // a check that fitted: no cost it was refused at
		capped = l.Burst() + 1
	}
	remaining := l.Burst()
	if now < k.resetAt {
		remaining = remainingAt(l, capped, k.remaining, k.resetAt, now)
	}
	if cost > remaining {
		return sluice.Status{Allowed: true, Undecided: true}
	}
	return sluice.Status{Allowed: true, Remaining: remaining, ResetAfter: ceilMicro(k.resetAt - now)}
}

// retryAtCost returns when the store admits cost of limit l, given that it
// admits cost0 ≤ cost at retryAt (times in ns since the cache's base, the
// store's wait a whole number of µs). A bucket (token, leaky, GCRA) needs
// the cost's difference to refill, (cost-cost0)·W/Q longer: the store
// rounds that sum up to a µs once, so whole µs of the difference are added
// (at most 1 µs early, never late); a fixed window admits every cost up to
// its Quantity at its end, retryAt. For a sliding log or counter retryAt
// is a lower bound.
func retryAtCost(l sluice.Limit, cost0, cost, retryAt int64) int64 {
	switch l.Algorithm() {
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmLeakyBucket, sluice.AlgorithmGCRA:
		us, ok := mulDivFloor(cost-cost0, l.Window().Microseconds(), l.Quantity())
		if !ok {
			return math.MaxInt64
		}
		return algo.AddSat(retryAt, algo.MulSat(us, int64(time.Microsecond)))
	}
	return retryAt
}

// ceilMulDiv returns ⌈a·b/c⌉ for a, b ≥ 0 and c > 0, and false when that
// does not fit in an int64.
func ceilMulDiv(a, b, c int64) (int64, bool) {
	q, r, ok := mulDiv(a, b, c)
	if ok && r != 0 {
		q, ok = q+1, q < math.MaxInt64
	}
	return q, ok
}

// mulDivFloor returns ⌊a·b/c⌋ for a, b ≥ 0 and c > 0, and false when that
// does not fit in an int64.
func mulDivFloor(a, b, c int64) (int64, bool) {
	q, _, ok := mulDiv(a, b, c)
	return q, ok
}

// mulDiv returns the quotient and remainder of a·b by c for a, b ≥ 0 and
// c > 0, and false when the quotient does not fit in an int64.
func mulDiv(a, b, c int64) (q, r int64, ok bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, 0, false
	}
	uq, ur := bits.Div64(hi, lo, uint64(c))
	if uq > math.MaxInt64 {
		return 0, 0, false
	}
	return int64(uq), int64(ur), true
}
