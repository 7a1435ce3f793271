package sluice

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// The division helpers agree with Go's / and % on every divisor a Limit can
// have and every non-negative int64 dividend, with the edges drawn on
// purpose: 0, 1, 2^63-1, powers of two and their neighbours, the divisor
// itself and multiples of it give or take one, and divisors of 1.
func TestPropertyTickDivisionIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pow2 := rapid.Map(rapid.Int64Range(1, 45), func(k int64) int64 { return 1 << k })
		divisor := rapid.OneOf(
			rapid.Int64Range(1, 1000),
			rapid.Int64Range(1, 1<<45),
			pow2,
			rapid.Map(pow2, func(p int64) int64 { return p + 1 }),
			rapid.Map(pow2, func(p int64) int64 { return p - 1 }),
			rapid.SampledFrom([]int64{1, 3, 7, 100, 1000, 1e6, 3600e6, MaxQuantity, 1 << 45}),
		)
		rq, rw := divisor.Draw(t, "rq"), divisor.Draw(t, "rw")
		l := Limit{rq: rq, rw: rw}
		for _, d := range []int64{rq, rw} {
			k := rapid.Int64Range(0, math.MaxInt64/d).Draw(t, "k")
			n := rapid.OneOf(
				rapid.SampledFrom([]int64{0, 1, 2, d - 1, d, d + 1, math.MaxInt64, math.MaxInt64 - 1, 1 << 53, 1 << 62}),
				rapid.Int64Range(0, math.MaxInt64),
				rapid.Int64Range(0, 1<<54),
				rapid.Int64Range(max(k*d-1, 0), k*d+min(1, math.MaxInt64-k*d)),
			).Draw(t, "n")
			if d == rw && l.units(n) != n/rw {
				t.Fatalf("units(%d) with rw %d = %d, want %d", n, rw, l.units(n), n/rw)
			}
			if d == rq {
				us, rest := l.refillTime(n)
				if us != n/rq || rest != n%rq || l.refillCeil(n) != ceilDiv(n, rq) {
					t.Fatalf("%d ticks at rq %d: refillTime %d rem %d, refillCeil %d", n, rq, us, rest, l.refillCeil(n))
				}
			}
		}
	})
}
