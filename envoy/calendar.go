package envoy

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// Fixed windows are envoyproxy/ratelimit's: unit-length windows counted
// from the Unix epoch, the n-th covering [n·u, (n+1)·u) in Unix seconds for
// a unit of u seconds. Seconds, minutes, hours and days start where
// sluice's own windows start (sluice.Epoch is a Unix midnight), but weeks
// (which start on Thursdays), 30-day months and 365-day years do not.
//
// Such a rule keeps its state under a key that names the Unix window
// ("…:w<n>"), as envoyproxy/ratelimit's cache keys do, and counts it in a
// sluice fixed window of a length chosen so that none of sluice's window
// boundaries falls inside that Unix window (give or take
// calendarMargin): the count therefore runs from the Unix window's start
// to its end, and the next Unix window starts afresh under the next key.
// Lengths up to sluice.MaxFixedWindow (M) cover every Unix week, month and
// year that starts at least calendarMargin after sluice.Epoch: for a span
// [f, t] of seconds since sluice.Epoch, f/q for a whole q in [f/M, f/(t−f)]
// is such a length, and that range holds a whole number once
// f·(1/(t−f) − 1/M) ≥ 1; before that, M itself holds the span (the first
// year starts 353 days after sluice.Epoch and ends within M, the second
// 718 days after). A window that starts earlier (none is still running)
// falls back to sluice's own windows, aligned to sluice.Epoch.

// calendarMargin is how far the clock of the store may be from the
// service's around a Unix window's boundaries without counting a request
// in the wrong window.
const calendarMargin = 5 * time.Second

// calendarWindow is the sluice limit of one Unix window of a rule.
type calendarWindow struct {
	n     int64 // the Unix window: n·unit ≤ t < (n+1)·unit
	limit sluice.Limit
	ok    bool // false: no length fits, use the rule's own limit
	key   string
}

// calendar caches a rule's calendarWindow for the current Unix window.
type calendar struct {
	cur atomic.Pointer[calendarWindow]
}

// calendarAt returns the limit and key suffix that r counts the Unix second unix
// in; ok false when r falls back to its own limit.
func (r *rule) calendarAt(unix int64) (sluice.Limit, string, bool) {
	u := r.unitSeconds
	n := floorDiv(unix, u)
	if w := r.cal.cur.Load(); w != nil && w.n == n {
		return w.limit, w.key, w.ok
	}
	w := &calendarWindow{n: n}
	if l, ok := alignedLength(n*u, u); ok {
		w.limit = sluice.FixedWindow(r.limit.Quantity(), l).Named(r.label).WithID(r.id).WithShadow(r.limit.Shadow())
		w.ok = w.limit.Err() == nil
		w.key = ":w" + strconv.FormatInt(n, 10)
	}
	r.cal.cur.Store(w)
	return w.limit, w.key, w.ok
}

// epochUnix returns sluice.Epoch in seconds since the Unix epoch (read
// from sluice's own conversion, which a program's assignment to the
// variable sluice.Epoch does not change).
func epochUnix() int64 { return sluice.TimeFromMicros(0).Unix() }

// alignedLength returns a window length L (whole seconds, at most
// sluice.MaxFixedWindow), the shortest or close to it, such that the sluice fixed window of length
// L that contains the Unix second start−calendarMargin also contains
// start+unit+calendarMargin; false if there is none. The state of a Unix
// window's key lives until its sluice window ends: the shortest length
// keeps that within about twice the Unix window for weeks, months and
// years (a few hours for a window of minutes that does not divide a day),
// not the ~814 days of MaxFixedWindow.
func alignedLength(start, unit int64) (time.Duration, bool) {
	margin := int64(calendarMargin / time.Second)
	epoch := epochUnix()
	from, to := start-margin-epoch, start+unit+margin-epoch // seconds since sluice.Epoch
	if from < 0 {
		return 0, false
	}
	maxL, span := int64(sluice.MaxFixedWindow/time.Second), to-from
	// The window of length L holding from is the q-th, q = ⌊from/L⌋; it
	// holds to as well iff to < (q+1)·L. For a quotient q the lengths that
	// do both are (to/(q+1), from/q], and the shortest lengths have the
	// largest q. That interval is at least 2 wide, so holds a whole
	// number, once from/q − to/(q+1) = (from − q·span)/(q·(q+1)) ≥ 2, that
	// is q·(2q+2+span) ≤ from: start above the largest such q (found by
	// bisection) and go down until a length fits.
	lo, hi := int64(0), from/span
	for lo < hi {
		mid := hi - (hi-lo)/2
		if mid <= from/(2*mid+2+span) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for q := lo + 1; q >= 0 && q >= from/maxL-1; q-- {
		l := to/(q+1) + 1 // the shortest length with to < (q+1)·L
		if l <= maxL && (q == 0 || l <= from/q) {
			return time.Duration(l) * time.Second, true
		}
	}
	return 0, false
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// windowReset returns envoyproxy/ratelimit's duration_until_reset of a
// fixed window of unit seconds at the Unix second unix: the whole seconds
// from unix to the end of its Unix window, in [1s, unit].
func windowReset(unix, unit int64) time.Duration {
	return time.Duration(unit-(unix-floorDiv(unix, unit)*unit)) * time.Second
}
