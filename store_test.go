package sluice_test

import (
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// TestPropertyStoreAccessorsMatchTheMethods: LimitKey, which stores call
// instead of the value methods to spare a copy of the Limit, reports what
// Name and Algorithm do, and LagTolerance is the time in which the limit
// refills max(1, Burst/LagShare) units, rounded down, for every algorithm,
// named or not.
func TestPropertyStoreAccessorsMatchTheMethods(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genLimit(t, rapid.SampledFrom(sluice.Algorithms()).Draw(t, "alg"))
		if rapid.Bool().Draw(t, "named") {
			l = l.Named(rapid.StringMatching(`[a-z][a-z0-9-]{0,20}`).Draw(t, "name"))
		}
		name, alg := sluice.LimitKey(&l)
		if name != l.Name() || alg != l.Algorithm() {
			t.Fatalf("%s: LimitKey %q %v; the methods say %q %v", l, name, alg, l.Name(), l.Algorithm())
		}
		// Units refilled in a tolerance: lag·Quantity/Window; the tolerance
		// is the longest whole ns for which that is at most max(1, b/256).
		units := max(1, l.Burst()/sluice.LagShare)
		want := new(big.Int).Mul(big.NewInt(int64(l.Window())), big.NewInt(units))
		want.Quo(want, big.NewInt(l.Quantity()))
		if want.Cmp(big.NewInt(int64(sluice.Never))) > 0 {
			want.SetInt64(int64(sluice.Never))
		}
		if got := sluice.LagTolerance(&l); int64(got) != want.Int64() {
			t.Fatalf("%s: LagTolerance %d ns, want %s", l, got, want)
		}
		if bad := l.WithBurst(-1); sluice.LagTolerance(&bad) != 0 {
			t.Fatalf("%s: LagTolerance %v of an invalid limit", bad, sluice.LagTolerance(&bad))
		}
	})
}
