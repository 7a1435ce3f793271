package sluice_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// TestPropertyStoreAccessorsMatchTheMethods: LimitKey and LimitRate, which
// stores call instead of the value methods to spare a copy of the Limit,
// report what Name, Algorithm, Quantity, Window and Burst do, for every
// algorithm, named or not.
func TestPropertyStoreAccessorsMatchTheMethods(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genLimit(t, rapid.SampledFrom(sluice.Algorithms()).Draw(t, "alg"))
		if rapid.Bool().Draw(t, "named") {
			l = l.Named(rapid.StringMatching(`[a-z][a-z0-9-]{0,20}`).Draw(t, "name"))
		}
		name, alg := sluice.LimitKey(&l)
		q, w, b := sluice.LimitRate(&l)
		if name != l.Name() || alg != l.Algorithm() || q != l.Quantity() || w != l.Window() || b != l.Burst() {
			t.Fatalf("%s: LimitKey %q %v, LimitRate %d %v %d; the methods say %q %v, %d %v %d",
				l, name, alg, q, w, b, l.Name(), l.Algorithm(), l.Quantity(), l.Window(), l.Burst())
		}
	})
}
