package sluice_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// A bucket whose exact share needs a quantity beyond MaxQuantity over a
// small window is rounded down over its own window, ⌊Q·num/den⌋ per W with
// burst ⌊B·num/den⌋ — within a unit of the exact rate — not collapsed to the
// last fallback, 1 per W with a burst of 1.
func TestScaleOfALargeQuantityRoundsTheRateDown(t *testing.T) {
	for _, l := range []sluice.Limit{
		sluice.TokenBucket(500_000_000_001, time.Microsecond),
		sluice.GCRA(1<<40-1, time.Microsecond),
	} {
		if l.Err() != nil {
			t.Fatal(l.Err())
		}
		s := l.Scale(3, 4)
		wantBurst := l.Burst() * 3 / 4
		if s.Burst() != wantBurst {
			t.Errorf("%v.Scale(3,4) = %v: burst %d, want ⌊B·3/4⌋ = %d", l, s, s.Burst(), wantBurst)
		}
		// rate Q'/W' should be at least half the exact Q·3/(4W)
		got := new(big.Rat).SetFrac64(s.Quantity(), int64(s.Window()/time.Microsecond))
		exact := new(big.Rat).SetFrac64(l.Quantity()*3, 4*int64(l.Window()/time.Microsecond))
		if got.Cmp(new(big.Rat).Mul(exact, big.NewRat(1, 2))) < 0 {
			t.Errorf("%v.Scale(3,4) = %v: rate %v per µs, want about %v", l, s, got.FloatString(3), exact.FloatString(3))
		}
	}
}
