package sluice

import "math/bits"

// slidingCounter is Cloudflare's sliding window counter: T = start of the
// current aligned window, A = units admitted in it, B = units admitted in the
// window before. At offset e into the current window the estimate of use is
// ⌊B·(w-e)/w⌋ + A: the previous window's count weighted by the share of it
// still inside (now-w, now], rounded down. Rounding down is what makes the
// boundary example of the design doc admit 17 (⌊100·50/60⌋ = 83).
func (l *Limit) slidingCounter(s *State, now, cost int64, v *verdict) (changed bool) {
	start, curr, prev := windowStart(now, l.w), max(s.A, 0), max(s.B, 0)
	last := windowStart(clampTime(s.T), l.w)
	switch {
	case curr == 0 && prev == 0:
		// the zero State: nothing recorded, nothing to hold time back
	case start <= last:
		start = last // the same window, or a clock step back
	case start == last+l.w:
		prev, curr = curr, 0
	default:
		prev, curr = 0, 0
	}
	e := max(now, start) - start
	used := addSat(mulDivFloor(min(prev, l.q), l.w-e, l.w), curr)

	*v = verdict{allowed: cost == 0 || used <= l.q-cost}
	switch {
	case cost > l.q:
		v.retry = maxTime
	case !v.allowed:
		v.retry = l.counterRetry(start, curr, prev, cost) - now
	case cost > 0:
		curr += cost
		used += cost
		*s, changed = State{T: start, A: curr, B: prev}, true
	}
	v.remaining = max(l.q-used, 0)
	switch {
	case curr > 0:
		v.reset = start + l.w + l.counterFades(curr, 0) - now
	case used > 0:
		v.reset = start + l.counterFades(prev, 0) - now
	}
	return changed
}

// counterRetry returns the earliest time at which a check of cost ≤ q fits,
// given the current window's start and counts.
func (l *Limit) counterRetry(start, curr, prev, cost int64) int64 {
	if k := l.q - curr - cost; k >= 0 {
		if e := l.counterFades(min(prev, l.q), k); e < l.w {
			return start + e
		}
	}
	// Next window: the current count becomes the weighted one.
	return start + l.w + l.counterFades(min(curr, l.q), l.q-cost)
}

// counterFades returns the smallest offset e in [0, w] into a window at which
// ⌊n·(w-e)/w⌋ ≤ k, for n, k ≥ 0; w when only the next window gets there.
func (l *Limit) counterFades(n, k int64) int64 {
	if n <= k {
		return 0
	}
	// ⌊n(w-e)/w⌋ ≤ k  ⇔  n(w-e) ≤ (k+1)w - 1  ⇔  w-e ≤ ⌊((k+1)w - 1)/n⌋
	hi, lo := bits.Mul64(uint64(k+1), uint64(l.w))
	lo, borrow := bits.Sub64(lo, 1, 0)
	hi -= borrow
	if hi >= uint64(n) { // quotient ≥ 2^64 > w
		return 0
	}
	span, _ := bits.Div64(hi, lo, uint64(n))
	if span >= uint64(l.w) {
		return 0
	}
	return l.w - int64(span)
}
