package algo

import "math/bits"

// SlidingCounter is Cloudflare's sliding window counter: T = start of the
// current aligned window, A = units admitted in it, B = units admitted in
// the window before. At offset e into the current window the estimate of
// use is ⌊B·(W-e)/W⌋ + A: the previous window's count weighted by the share
// of it still inside (now-W, now], rounded down. Rounding down is what
// makes the boundary example of the design doc admit 17
// (⌊100·50/60⌋ = 83). See Decide for the contract.
func SlidingCounter(p *Params, s *State, now, cost int64, v *Verdict) (changed bool) {
	now = ClampTime(now)
	start, curr, prev := windowStart(now, p.W), max(s.A, 0), max(s.B, 0)
	last := windowStart(ClampTime(s.T), p.W)
	switch {
	case curr == 0 && prev == 0:
		// the zero State: nothing recorded, nothing to hold time back
	case start <= last:
		start = last // the same window, or a clock step back
	case start == last+p.W:
		prev, curr = curr, 0
	default:
		prev, curr = 0, 0
	}
	e := max(now, start) - start
	used := AddSat(MulDivFloor(min(prev, p.Q), p.W-e, p.W), curr)

	*v = Verdict{Allowed: cost == 0 || used <= p.Q-cost}
	switch {
	case cost > p.Q:
		v.Retry = MaxTime
	case !v.Allowed:
		v.Retry = counterRetry(p, start, curr, prev, cost) - now
	case cost > 0:
		curr += cost
		used += cost
		*s, changed = State{T: start, A: curr, B: prev}, true
		v.Charged = max(now, start)
	}
	v.Remaining = max(p.Q-used, 0)
	// Full again once the estimate is 0: a count weighs at most Q (a state
	// written under a larger quantity is clamped to this one's), the
	// current one through the next window, the previous one through this.
	switch {
	case curr > 0:
		v.Reset = start + p.W + counterFades(p, min(curr, p.Q), 0) - now
	case used > 0:
		v.Reset = start + counterFades(p, min(prev, p.Q), 0) - now
	}
	return changed
}

// counterRetry returns the earliest time at which a check of cost ≤ Q
// fits, given the current window's start and counts.
func counterRetry(p *Params, start, curr, prev, cost int64) int64 {
	if k := p.Q - curr - cost; k >= 0 {
		if e := counterFades(p, min(prev, p.Q), k); e < p.W {
			return start + e
		}
	}
	// Next window: the current count becomes the weighted one.
	return start + p.W + counterFades(p, min(curr, p.Q), p.Q-cost)
}

// counterFades returns the smallest offset e in [0, W] into a window at
// which ⌊n·(W-e)/W⌋ ≤ k, for n, k ≥ 0; W when only the next window gets
// there.
func counterFades(p *Params, n, k int64) int64 {
	if n <= k {
		return 0
	}
	// ⌊n(w-e)/w⌋ ≤ k  ⇔  n(w-e) ≤ (k+1)w - 1  ⇔  w-e ≤ ⌊((k+1)w - 1)/n⌋
	hi, lo := bits.Mul64(uint64(k+1), uint64(p.W))
	lo, borrow := bits.Sub64(lo, 1, 0)
	hi -= borrow
	if hi >= uint64(n) { // quotient ≥ 2^64 > w
		return 0
	}
	span, _ := bits.Div64(hi, lo, uint64(n))
	if span >= uint64(p.W) {
		return 0
	}
	return p.W - int64(span)
}
