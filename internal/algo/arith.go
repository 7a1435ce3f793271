package algo

import (
	"math"
	"math/bits"
)

// The helpers in this file keep every algorithm's integer arithmetic exact and
// overflow-safe: sums and products saturate at the int64 bounds instead of
// wrapping, and products that may exceed 64 bits are compared in 128 bits.

// AddSat returns a+b, saturated to [math.MinInt64, math.MaxInt64].
func AddSat(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// MulSat returns a*b for a, b >= 0, saturated at math.MaxInt64.
func MulSat(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// ceilDiv returns ⌈a/b⌉ for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// floorMod returns a mod m in [0, m) for m > 0, also for negative a.
func floorMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// windowStart returns the start of the window of length w (µs) that contains
// t, with windows aligned to the epoch. It never overflows.
func windowStart(t, w int64) int64 {
	return t - floorMod(t, w)
}

// MulDivFloor returns ⌊a·b/c⌋ for a, b >= 0 and c > 0, computed in 128 bits
// and saturated at math.MaxInt64.
func MulDivFloor(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// GCD returns the greatest common divisor of a, b > 0.
func GCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// The bucket algorithms turn ticks into units (dividing by RW) and into
// refill time (dividing by RQ), for the non-negative amounts they deal in.

// units returns ⌊t/RW⌋, the whole units in t ≥ 0 ticks.
func (p *Params) units(t int64) int64 { return t / p.RW }

// refillTime returns ⌊m/RQ⌋ and m mod RQ for m ≥ 0 ticks: the whole µs
// that refill m ticks and the ticks left over.
func (p *Params) refillTime(m int64) (us, rest int64) { return m / p.RQ, m % p.RQ }

// refillCeil returns ⌈m/RQ⌉ for m ≥ 0: the µs until m ticks have refilled.
func (p *Params) refillCeil(m int64) int64 { return ceilDiv(m, p.RQ) }
