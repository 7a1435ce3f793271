package sluice

import (
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice/internal/algo"
)

// A bucket's share (a degradation level's factor) whose exact rate cannot
// be kept exact with its burst ⌊B·num/den⌋ refills at the fastest exact
// rate under the exact one, per W or per the longest span of whole windows,
// with that burst: not 1 per W with a burst of 1.
func TestScaleRoundsAnInexactShareDownToTheFastestExactOne(t *testing.T) {
	day := 24 * time.Hour
	for _, tt := range []struct {
		name     string
		l        Limit
		num, den int64
		want     Limit
	}{
		{name: "a yearly GCRA at 85% keeps 930 a year, 935 being inexact with a burst of 1870",
			l: GCRA(1100, 365*day).WithBurst(2200), num: 850, den: 1000, want: GCRA(930, 365*day).WithBurst(1870)},
		{name: "a yearly GCRA at 95% keeps 1044 a year",
			l: GCRA(1100, 365*day).WithBurst(2200), num: 950, den: 1000, want: GCRA(1044, 365*day).WithBurst(2090)},
		{name: "a 31-day bucket at 95% keeps ⌊Q·num/den⌋ per W when the exact rate needs a window beyond MaxWindow",
			l: TokenBucket(137, 31*day).WithBurst(274), num: 950, den: 1000, want: TokenBucket(130, 31*day).WithBurst(260)},
		{name: "a 31-day bucket at 85% takes 13 windows, whose finer quantity comes nearer the exact rate",
			l: TokenBucket(137, 31*day).WithBurst(274), num: 850, den: 1000, want: TokenBucket(1513, 13*31*day).WithBurst(232)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.want.Err(); err != nil {
				t.Fatalf("the expected share %v is invalid: %v", tt.want, err)
			}
			s := tt.l.Scale(tt.num, tt.den)
			if s.Err() != nil || s.Name() != tt.l.Name() || s.Quantity() != tt.want.Quantity() ||
				s.Window() != tt.want.Window() || s.Burst() != tt.want.Burst() {
				t.Errorf("%v scaled by %d/%d is %v (err %v), want %v", tt.l, tt.num, tt.den, s, s.Err(), tt.want)
			}
		})
	}
}

// largestExact finds the largest quantity at most most that a bucket keeps
// exact over its window, the one found by trying every quantity downwards,
// from the window's divisors alone; bursts are drawn around the exactness
// bound (b·w near 2^53 times a small factor), where quantities differ.
func TestLargestExactQuantityIsTheOneATrialOfEveryQuantityFinds(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		alg := rapid.SampledFrom([]Algorithm{AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmGCRA}).Draw(rt, "alg")
		maxW := int64(MaxWindow / time.Microsecond)
		w := rapid.OneOf(
			rapid.SampledFrom([]int64{86400e6, 31 * 86400e6, 365 * 86400e6, 403 * 86400e6, 1e12 + 39, 1000003 * 1000033, maxW}),
			rapid.Int64Range(1, maxW),
		).Draw(rt, "w")
		most := rapid.Int64Range(1, 3000).Draw(rt, "most")
		b := max(min(algo.MulDivFloor(1<<53, rapid.Int64Range(1, most).Draw(rt, "factor"), w), MaxQuantity), 1)
		var maxWait int64
		if alg == AlgorithmLeakyBucket && rapid.Bool().Draw(rt, "queue") {
			maxWait = rapid.Int64Range(1, maxW).Draw(rt, "maxWait")
		}
		want := int64(0)
		for c := most; c >= 1; c-- {
			if _, ok := algo.NewParams(algo.Kind(alg), c, w, b, maxWait); ok {
				want = c
				break
			}
		}
		if got := largestExact(alg, most, w, b, maxWait); got != want {
			rt.Fatalf("largest exact quantity ≤ %d per %dµs with burst %d, max wait %d: %d, want %d", most, w, b, maxWait, got, want)
		}
	})
}

// factorize finds every prime factor of a window, also of one with two
// prime factors above 2^15 that trial division does not reach.
func TestFactorizeFindsEveryPrimeFactor(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		maxW := int64(MaxWindow / time.Microsecond)
		prime := func(lo, hi int64, label string) int64 {
			for p := rapid.Int64Range(lo, hi).Draw(rt, label); ; p++ {
				if big.NewInt(p).ProbablyPrime(0) {
					return p
				}
			}
		}
		n := rapid.OneOf(
			rapid.Int64Range(1, maxW),
			rapid.Custom(func(rt *rapid.T) int64 {
				p := prime(1<<15, 1<<22, "p")
				return p * prime(1<<15, maxW/p-1000, "q")
			}),
		).Draw(rt, "n")
		f := factorize(n)
		m := int64(1)
		for i := 0; i < f.n; i++ {
			if !big.NewInt(f.p[i]).ProbablyPrime(0) {
				rt.Fatalf("factor %d of %d is not prime", f.p[i], n)
			}
			for e := 0; e < f.e[i]; e++ {
				m *= f.p[i]
			}
		}
		if m != n {
			rt.Fatalf("factors %v^%v of %d multiply to %d", f.p[:f.n], f.e[:f.n], n, m)
		}
	})
}

// For any valid bucket and factor, the share is valid, holds ⌊B·num/den⌋
// (at least 1) unless it is the last resort, 1 per W with a burst of 1,
// never refills faster than the exact share but for a quantity of 1 (the
// rounding up of a share below one unit), and refills at least as fast as
// the largest exact quantity per W under the exact share.
func TestPropertyScaleKeepsTheFastestExactShare(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		alg := rapid.SampledFrom([]Algorithm{AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmGCRA}).Draw(rt, "alg")
		maxW := int64(MaxWindow / time.Microsecond)
		q := rapid.OneOf(rapid.Int64Range(1, 5000), rapid.Int64Range(1, MaxQuantity)).Draw(rt, "q")
		w := rapid.OneOf(
			rapid.SampledFrom([]int64{1e6, 3600e6, 86400e6, 31 * 86400e6, 365 * 86400e6}),
			rapid.Int64Range(1, maxW),
		).Draw(rt, "w")
		l := NewLimit(alg, q, time.Duration(w)*time.Microsecond)
		if rapid.Bool().Draw(rt, "burst") {
			l = l.WithBurst(rapid.OneOf(rapid.Int64Range(1, 10000), rapid.Int64Range(1, MaxQuantity)).Draw(rt, "b"))
		}
		if alg == AlgorithmLeakyBucket && rapid.Bool().Draw(rt, "queue") {
			l = l.WithMaxWait(time.Duration(rapid.Int64Range(1, maxW).Draw(rt, "maxWait")) * time.Microsecond)
		}
		if l.Err() != nil {
			rt.Skip("invalid limit")
		}
		den := rapid.Int64Range(2, 1000).Draw(rt, "den")
		num := rapid.Int64Range(1, den-1).Draw(rt, "num")
		s := l.Scale(num, den)
		if err := s.Err(); err != nil {
			rt.Fatalf("%v scaled by %d/%d is invalid: %v", l, num, den, err)
		}
		burst := max(l.Burst()*num/den, 1)
		lastResort := s.Quantity() == 1 && s.Window() == l.Window() && s.Burst() == 1
		if s.Burst() != burst && !lastResort {
			rt.Fatalf("%v scaled by %d/%d is %v: burst %d, want %d", l, num, den, s, s.Burst(), burst)
		}
		rate := big.NewRat(s.Quantity(), int64(s.Window()/time.Microsecond))
		exact := new(big.Rat).SetFrac(big.NewInt(q*num), new(big.Int).Mul(big.NewInt(den), big.NewInt(w)))
		if rate.Cmp(exact) > 0 && s.Quantity() != 1 {
			rt.Fatalf("%v scaled by %d/%d is %v, faster than the exact share", l, num, den, s)
		}
		if most := q * num / den; most <= 5000 {
			for c := most; c >= 1; c-- {
				if _, ok := algo.NewParams(algo.Kind(alg), c, w, burst, l.maxWait); ok {
					if rate.Cmp(big.NewRat(c, w)) < 0 {
						rt.Fatalf("%v scaled by %d/%d is %v, slower than %d per %v, exact with burst %d",
							l, num, den, s, c, l.Window(), burst)
					}
					break
				}
			}
		}
	})
}
