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
// promises, or n when l's quantity (a bucket's burst) is below n, since
// each share is at least 1 (a store-down policy that starts each key fresh admits that much
// on top of what the shared state had already counted). It is
// l.Scale(1, n), n clamped to [1, 2^16]:
//
//   - Window algorithms admit ⌊Q/n⌋ per W, at least 1.
//   - Bucket algorithms (token, leaky, GCRA) hold ⌊B/n⌋ units, at least 1,
//     and refill at exactly Q/(n·W): for a bucket only the rate Q/W matters,
//     so the share is written as Q' per W' with Q'/W' = Q/(nW) in lowest
//     terms. Rounding the rate down as well would be needlessly strict (10/s
//     over 3 instances would be 3/s, not 3.33/s) and, for large quantities
//     over long windows, could not be kept exact (1,000,000/day over 3
//     instances). Where W' would exceed MaxWindow (nW beyond about 407
//     days with no factor in common with Q), or the share cannot be kept
//     exact, the rate is rounded down as Scale says.
//
// An invalid l, or n ≤ 1, returns l unchanged.
func (l Limit) perInstance(n int64) Limit {
	return l.Scale(1, min(n, maxInstances))
}

// Scale returns l with its quantity and burst multiplied by num/den ≤ 1 (a
// degradation level's factor, or one instance's share, see perInstance).
// num and den are clamped to [1, 2^16]; a factor of 1 or more, or an
// invalid l, returns l unchanged. Name, ID, algorithm, calendar period, max
// wait and shadow mode are kept.
//
// Window algorithms admit ⌊Q·num/den⌋ per W, at least 1.
//
// Buckets (token, leaky, GCRA) hold B' = ⌊B·num/den⌋ units, at least 1, and
// refill at exactly Q·num/(den·W), written per W when that is a whole
// quantity and otherwise in lowest terms, when that window is at most
// MaxWindow and the bucket is exact: a bucket of burst B' refilling Q' per
// W' counts B'·W'/g ticks, g = gcd(Q', W'), plus a queue's MaxWait·Q'/g,
// and NewLimit accepts at most 2^53 ticks, refilled within 2^52 µs.
// Otherwise the rate is rounded down to the fastest that a bucket of burst
// B' keeps exact, never above the exact one: the largest quantity at most
// ⌊Q·num/den⌋ per W, or at most ⌊k·Q·num/den⌋ per k·W, kW the longest whole
// number of windows within MaxWindow, whichever is faster (per W on a tie). A quantity that shares a larger factor with
// its window keeps a larger burst exact, so the largest one is found among
// the multiples of the window's divisors, not by trying every quantity. A
// share below one unit per k·W is rounded up to 1 per k·W. Only if no rate
// keeps a burst of B' exact is the share 1 per W with a burst of 1.
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
	burst, maxWait := max(l.Burst()*num/den, 1), l.maxWait
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
	if g := algo.GCD(q, total); total/g <= maxW {
		if s := bucket(q/g, total/g); s.Err() == nil {
			return s
		}
	}
	// Rounded down: over W, or over the longest span of k windows, whose
	// finer quantities come nearer the exact rate.
	k := maxW / w
	qw, qk := q/den, algo.MulDivFloor(q, k, den) // ⌊Q·num/den⌋, ⌊k·Q·num/den⌋
	bw := largestExact(alg, qw, w, burst, maxWait)
	var bk int64
	if k > 1 {
		bk = largestExact(alg, qk, k*w, burst, maxWait)
	}
	switch {
	case bk > 0 && (bw == 0 || bk/k >= bw && bk > bw*k): // bk per kW is faster (bk/k ≥ bw first: no overflow)
		return bucket(bk, k*w)
	case bw > 0:
		return bucket(bw, w)
	case qk == 0: // below one unit per k·W
		if s := bucket(1, k*w); s.Err() == nil {
			return s
		}
	}
	return keep(NewLimit(alg, 1, l.Window()))
}

// maxTicks is the most ticks a bucket may count, B·RW + MaxWait·RQ
// (algo.NewParams): exact in the doubles of Redis's Lua.
const maxTicks = 1 << 53

// largestExact returns the largest quantity in [1, min(most, MaxQuantity)]
// that a bucket of alg refilling per w µs (w ≤ MaxWindow) with burst b and a
// queue of maxWait µs keeps exact (algo.NewParams accepts it), or 0 if none
// does.
//
// A quantity q is a multiple of g = gcd(q, w), a divisor of w, and is kept
// exact when b·w/g + maxWait·q/g ≤ 2^53 and its deepest debt refills within
// 2^52 µs, (b·w + maxWait·q)/q: the more q shares with w, the fewer ticks.
// For each divisor d of w up to most, the largest multiple k·d ≤ most with
// b·(w/d) + maxWait·k ≤ 2^53 is kept exact (its gcd with w is at least d)
// and is at least every exact quantity whose gcd with w is d; the refill
// time only shortens as q grows. So the largest exact quantity is the
// largest of these candidates, one per divisor: a w of at most 2^45 has
// some 15,000 divisors at most, most windows a few hundred.
func largestExact(alg Algorithm, most, w, b, maxWait int64) int64 {
	best, most := int64(0), min(most, MaxQuantity)
	if most < 1 {
		return 0
	}
	f := factorize(w)
	f.divisors(most, func(d int64) {
		ticks := algo.MulSat(b, w/d)
		if ticks > maxTicks {
			return
		}
		k := most / d
		if maxWait > 0 {
			k = min(k, (maxTicks-ticks)/maxWait)
		}
		if c := k * d; k >= 1 && c > best {
			if _, ok := algo.NewParams(algo.Kind(alg), c, w, b, maxWait); ok {
				best = c
			}
		}
	})
	return best
}

// primeFactors are the distinct primes of a number of at most 2^45 and
// their exponents: it has at most 12 (the first 13 primes multiply to more).
type primeFactors struct {
	n int
	p [12]int64
	e [12]int
}

func (f *primeFactors) add(p int64, e int) {
	f.p[f.n], f.e[f.n] = p, e
	f.n++
}

// factorize returns the prime factors of n in [1, 2^45], by trial division
// with each factor divided out as it is found: a window of whole seconds or
// milliseconds is done after a few thousand divisions; a prime near 2^45,
// the worst case, takes some 4 million (milliseconds, once per limit
// scaled: the callers keep what Scale returns).
func factorize(n int64) primeFactors {
	var f primeFactors
	divide := func(p int64) {
		e := 0
		for n%p == 0 {
			n /= p
			e++
		}
		if e > 0 {
			f.add(p, e)
		}
	}
	divide(2)
	divide(3)
	for p := int64(5); p*p <= n; p += 6 { // 6j ± 1
		divide(p)
		divide(p + 2)
	}
	if n > 1 {
		f.add(n, 1)
	}
	return f
}

// divisors calls fn with each divisor of the factored number that is at
// most most, in no particular order.
func (f *primeFactors) divisors(most int64, fn func(d int64)) {
	var walk func(i int, d int64)
	walk = func(i int, d int64) {
		if i == f.n {
			fn(d)
			return
		}
		for e := 0; e <= f.e[i]; e++ {
			walk(i+1, d)
			if d > most/f.p[i] {
				return
			}
			d *= f.p[i]
		}
	}
	walk(0, 1)
}
