package memory

import (
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// A clock's lag is tolerated by a limit of steady refill (the buckets,
// GCRA, concurrency) exactly when one resolution of it refills at most
// max(1, ⌊Burst/lagShare⌋) units: res·Q ≤ W·max(1, ⌊B/256⌋), in exact
// integers, for every resolution; never by a windowed limit (fixed window,
// sliding counter, sliding log), which gives a whole quota back at once.
func TestPropertyToleratesIsTheLagRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom(append(sluice.Algorithms(), sluice.AlgorithmConcurrency)).Draw(t, "alg")
		q := rapid.OneOf(rapid.Int64Range(1, 1000), rapid.Int64Range(1, sluice.MaxQuantity)).Draw(t, "q")
		w := rapid.OneOf(rapid.Int64Range(1, 1e7), rapid.Int64Range(1, int64(sluice.MaxWindow/time.Microsecond))).Draw(t, "w")
		l := sluice.NewLimit(alg, q, time.Duration(w)*time.Microsecond)
		if alg == sluice.AlgorithmGCRA || alg == sluice.AlgorithmTokenBucket {
			l = l.WithBurst(rapid.Int64Range(1, sluice.MaxQuantity).Draw(t, "burst"))
		}
		if l.Err() != nil {
			t.Skip("inexact limit")
		}
		res := time.Duration(rapid.OneOf(rapid.Int64Range(1, 1e7), rapid.Int64Range(1, 1<<62)).Draw(t, "res"))
		c := &clock{res: res}
		lhs := new(big.Int).Mul(big.NewInt(int64(res)), big.NewInt(l.Quantity()))
		rhs := new(big.Int).Mul(big.NewInt(int64(l.Window())), big.NewInt(max(1, l.Burst()/lagShare)))
		want := lhs.Cmp(rhs) <= 0
		switch alg {
		case sluice.AlgorithmFixedWindow, sluice.AlgorithmSlidingCounter, sluice.AlgorithmSlidingLog:
			want = false
		}
		if c.tolerates(&l) != want {
			t.Fatalf("%v at a resolution of %v: tolerates %v, want %v", l, res, !want, want)
		}
	})
}
