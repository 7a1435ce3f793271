package sluice

import (
	"time"

	"github.com/sluice-dev/sluice/internal/algo"
)

// maxInstances bounds the instance count a limit is shared between, so that
// instances × window (µs) stays far from overflow: 2^16 × 2^45 < 2^63.
const maxInstances = 1 << 16

// perInstance returns the share of l that each of n instances enforces on
// its own when they cannot share state (their shared store is down): from
// fresh states, n instances together admit no more per window than l
// promises (a store-down policy that starts each key fresh admits that much
// on top of what the shared state had already counted). Name, ID, algorithm,
// calendar period, max wait and shadow mode are kept; n is clamped to [1, 2^16].
//
//   - Window algorithms admit ⌊Q/n⌋ per W, at least 1.
//   - Bucket algorithms (token, leaky, GCRA) hold ⌊B/n⌋ units, at least 1,
//     and refill at exactly Q/(n·W): for a bucket only the rate Q/W matters,
//     so the share is written as Q' per W' with Q'/W' = Q/(nW) in lowest
//     terms. Rounding the rate down as well would be needlessly strict (10/s
//     over 3 instances would be 3/s, not 3.33/s) and, for large quantities
//     over long windows, could not be kept exact (1,000,000/day over 3
//     instances). Only when Q' would exceed MaxQuantity is the rate rounded
//     down, to ⌊Q/n⌋ per W; only when W' would exceed MaxWindow (nW beyond
//     about 407 days with no factor in common with Q), to at least one unit
//     per the longest whole number of windows within MaxWindow; and if even
//     that cannot be kept exact, the share is 1 per W with a burst of 1.
//
// An invalid l, or n ≤ 1, returns l unchanged.
func (l Limit) perInstance(n int64) Limit {
	return l.Scale(1, min(n, maxInstances))
}

// Scale returns l with its quantity and burst multiplied by num/den ≤ 1 (a
// degradation level's factor, or one instance's share), rounded as
// perInstance describes: windows admit ⌊Q·num/den⌋ (at least 1), buckets
// hold ⌊B·num/den⌋ (at least 1) and refill at exactly Q·num/(den·W). num and
// den are clamped to [1, 2^16]; a factor of 1 or more, or an invalid l,
// returns l unchanged.
func (l Limit) Scale(num, den int64) Limit {
	num, den = min(max(num, 1), maxInstances), min(max(den, 1), maxInstances)
	if num >= den || l.Err() != nil {
		return l
	}
	alg, name, q := l.Algorithm(), l.Name(), l.Quantity()
	w := int64(l.Window() / time.Microsecond)
	keep := func(s Limit) Limit {
		return s.WithMaxWait(l.MaxWait()).Named(name).WithShadow(l.Shadow()).WithID(l.id)
	}
	switch alg {
	case AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmGCRA:
	default:
		s := l // a window keeps everything but its quantity: its ID, calendar, shadow
		s.q = max(q*num/den, 1)
		return s.build()
	}
	burst := max(l.Burst()*num/den, 1)
	bucket := func(q, w int64) Limit {
		return keep(NewLimit(alg, q, time.Duration(w)*time.Microsecond).WithBurst(burst))
	}
	maxW := int64(MaxWindow / time.Microsecond)
	if q*num%den == 0 { // the same window holds a whole quantity: keep it readable
		if s := bucket(q*num/den, w); s.Err() == nil {
			return s
		}
	}
	q *= num         // ≤ 2^56
	total := den * w // ≤ 2^61
	g := algo.GCD(q, total)
	if total/g <= maxW {
		// Exact; the share is representable when l is unless num/den adds
		// factors, which the fallbacks below handle.
		if s := bucket(q/g, total/g); s.Err() == nil {
			return s
		}
	}
	// The exact rate needs a quantity beyond MaxQuantity: the rate rounded
	// down over the same window.
	if s := bucket(max(algo.MulDivFloor(q, w, total), 1), w); s.Err() == nil && total/g <= maxW {
		return s
	}
	span := maxW / w * w // the longest whole number of windows allowed
	if s := bucket(max(algo.MulDivFloor(q, span, total), 1), span); s.Err() == nil {
		return s
	}
	return keep(NewLimit(alg, 1, l.Window()))
}
