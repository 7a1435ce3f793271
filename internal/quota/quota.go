// Package quota says what a limit's RateLimit headers state, in the sense of
// the IETF draft (draft-ietf-httpapi-ratelimit-headers): its quota q, its
// window w and, from a decision's Status, the seconds t until more of the
// quota is available. httplimit's headers and problem bodies and envoy's
// response headers say the same figures through it.
package quota

import (
	"math"
	"math/bits"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/algo"
)

// Quota is what every header mode and the problem body say of one limit:
// its quota q (units) and window w (whole seconds), and how to turn the
// limit's Status into the seconds t until more of that quota is available.
// The rules, for each algorithm (docs/headers.md works an example of each):
//
//   - fixed window, sliding log, sliding counter: q is the Quantity and w
//     the Window, rounded up to whole seconds;
//   - token bucket, GCRA, leaky bucket: q is the Burst, the most a client
//     can ever have at once, and w the time an emptied bucket (and a
//     queue's overfill) takes to be full again, B·W/Q + MaxWait, rounded up
//     to whole seconds: q=b;w=b·W/Q for a bucket of burst b refilled at Q
//     per W;
//   - concurrency: q is the Quantity in "concurrent-requests" and there is
//     no window (a slot frees when a request ends, which no clock predicts);
//   - a calendar limit (sluice.Calendar): q is the Quantity, and its windows
//     differ in length (a month is 28 to 31 days), so the headers state no
//     w (the draft's w is optional); W is the longest, which caps t.
//
// Remaining r is the Status's, at most q. Rounding w up states a rate no
// higher than the limit's: a client that spends q at once every w seconds
// is never refused, but by a sliding counter, whose estimate still weighs
// part of one window's spending in the next (q spent mid-window leaves
// about q/2 counted a window later).
type Quota struct {
	// Q is the quota, in units.
	Q int64
	// W is the window in whole seconds; 0: no window (concurrency).
	W int64
	// Bucket marks the bucket family, whose t is the time to the next whole unit.
	Bucket bool
	// Calendar marks a calendar limit, whose windows differ in length: the
	// headers state no w.
	Calendar bool
	window   int64 // the limit's Window, µs
	rate     int64 // the limit's Quantity, units per window
}

// Of returns the quota the headers state for l (see Quota). For a bucket
// a store leases, l is the limit its shared state decides by
// (leasehold.Of), whose burst is the most it admits at once.
func Of(l sluice.Limit) Quota {
	windowUS := int64(l.Window() / time.Microsecond)
	qt := Quota{Q: l.Burst(), window: windowUS, rate: l.Quantity(), Calendar: l.Period() != 0}
	switch l.Algorithm() {
	case sluice.AlgorithmConcurrency:
		qt.Q = l.Quantity()
		return qt
	case sluice.AlgorithmTokenBucket, sluice.AlgorithmGCRA, sluice.AlgorithmLeakyBucket:
		qt.Bucket = true
		refill := mulDiv(l.Burst(), windowUS, l.Quantity(), true)
		qt.W = CeilSeconds(micros(algo.AddSat(refill, int64(l.MaxWait()/time.Microsecond))))
	default:
		qt.W = CeilSeconds(l.Window())
	}
	return qt
}

// Until returns how long until more of the quota is available if nothing
// else arrives, for a limit whose Status shows remaining, reset (its
// ResetAfter: until the limit is full again) and retry (its RetryAfter, 0
// when allowed). It is never after the moment the limit is full again,
// and for a refused check never after its RetryAfter: the check then fits,
// so more is available. For
//
//   - a fixed window it is the window's end;
//   - the bucket family, the moment the next whole unit has refilled
//     (to within 1 µs, see below);
//   - a sliding log, the moment the newest admission leaves the window,
//     when the whole quota is back (older ones may free units earlier);
//   - a sliding counter, the time until it is full again, which runs to
//     almost two windows (a unit counts in its own window and fades
//     through the next); seconds caps it at the window;
//   - concurrency, zero while a slot is free, else a second, the interval
//     at which a refused client is told to poll.
//
// For the buckets, reset is ⌈m/RQ⌉ µs for the m ticks the bucket misses
// (see internal/algo), so reset − ⌊(B−r−1)·W/Q⌋ µs is the time until m has
// refilled down to what r+1 units leave missing, or 1 µs more.
func (qt *Quota) Until(remaining int64, reset, retry time.Duration) time.Duration {
	if qt.W == 0 { // concurrency
		if remaining > 0 {
			return 0
		}
		return time.Second
	}
	t := reset
	switch {
	case t <= 0:
		return 0
	case qt.Bucket && remaining < qt.Q:
		t -= micros(mulDiv(qt.Q-remaining-1, qt.window, qt.rate, false))
	}
	if retry > 0 {
		t = min(t, retry)
	}
	return t
}

// Seconds returns Until's duration as the header's t: rounded up to whole
// seconds, and never above w. Only a sliding counter's until passes w (but
// for a state written under other parameters, or a clock that stepped
// back): within one window from now its estimate drops by a unit, because
// either the previous window's weighted count has faded by one or the
// current window's count is weighted below itself 1 µs into the next
// window, which w, in whole seconds rounded up, covers but when now is
// exactly a window's start.
func (qt *Quota) Seconds(remaining int64, reset, retry time.Duration) int64 {
	t := CeilSeconds(qt.Until(remaining, reset, retry))
	if qt.W > 0 {
		t = min(t, qt.W)
	}
	return t
}

// mulDiv returns a·b/c rounded down (or up), for a, b ≥ 0 and c > 0,
// saturated at math.MaxInt64.
func mulDiv(a, b, c int64, up bool) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	if up && r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// micros returns us µs as a Duration, saturated at sluice.Never.
func micros(us int64) time.Duration {
	if us >= int64(sluice.Never/time.Microsecond) {
		return sluice.Never
	}
	return time.Duration(us) * time.Microsecond
}

// CeilSeconds rounds d up to whole seconds (0 for d ≤ 0), saturated at
// sluice.Never's seconds: the delay-seconds of t, Retry-After and reset
// headers.
func CeilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	if d >= sluice.Never-time.Second {
		return int64(sluice.Never / time.Second)
	}
	return int64((d + time.Second - 1) / time.Second)
}
