package server

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A reduced limit's burst never falls below its plan's largest cost, and
// the limit it floors is scaled by cost/burst, never more, whatever the
// burst: one above 2^16, the most Limit.Scale takes as a numerator or a
// denominator, is scaled by cost/burst too, not by cost/2^16.
func TestReducedLimitsFloorAtTheCostWhateverTheBurst(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     sluice.Limit
		cost      int64
		perMinute float64  // at most
		burst     [2]int64 // least and most
	}{
		{"a window of 100,000 a minute floored at a cost of 20,000 admits 20,000",
			sluice.NewLimit(sluice.AlgorithmFixedWindow, 100000, time.Minute), 20000, 20000, [2]int64{20000, 20000}},
		{"a bucket of 100,000 a minute floored at a cost of 20,000 holds and refills 20,000",
			sluice.NewLimit(sluice.AlgorithmTokenBucket, 100000, time.Minute), 20000, 20000, [2]int64{20000, 20000}},
		{"a bucket's rate is scaled by cost/burst, not set to the cost",
			sluice.NewLimit(sluice.AlgorithmTokenBucket, 1000, time.Minute).WithBurst(200000), 50000, 250, [2]int64{50000, 50000}},
		{"cost/burst in terms above 2^16 is rounded up by less than 1/2^16",
			sluice.NewLimit(sluice.AlgorithmSlidingCounter, 100003, time.Minute), 20000, 100003 * (20000.0/100003 + 1.0/(1<<16)), [2]int64{20000, 20000 + 100003>>16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &httplimit.Plan{Name: "bulk", Limits: []sluice.Limit{tc.limit}, Costs: map[string]int64{"POST /bulk": tc.cost}}
			got := reducedOptions(httplimit.Options{Plans: []*httplimit.Plan{p}}, 0.1, time.Hour).Plans[0].Limits[0]
			if err := got.Err(); err != nil {
				t.Fatal(err)
			}
			perMinute := float64(got.Quantity()) * float64(time.Minute) / float64(got.Window())
			if perMinute > tc.perMinute || got.Burst() < tc.burst[0] || got.Burst() > tc.burst[1] {
				t.Errorf("%v at factor 0.1 with a cost of %d: %d per %v (%.1f a minute), burst %d; want at most %.1f a minute, a burst in %v",
					tc.limit, tc.cost, got.Quantity(), got.Window(), perMinute, got.Burst(), tc.perMinute, tc.burst)
			}
		})
	}
}

// floorFraction(cost, burst) is the least fraction at least cost/burst
// with terms of at most 2^16: checked against every denominator.
func TestFloorFractionIsTheLeastAboveCostOverBurst(t *testing.T) {
	rnd := rand.New(rand.NewPCG(52, 4))
	cases := [][2]int64{{20000, 100000}, {20000, 65536}, {1, 1 << 40}, {1, 65537}, {3, 3}, {999, 1000}, {1<<40 - 1, 1 << 40}}
	for range 20 {
		burst := rnd.Int64N(1<<40) + 1
		cases = append(cases, [2]int64{rnd.Int64N(burst) + 1, burst}, [2]int64{rnd.Int64N(burst/1000+1) + 1, burst})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/%d", c[0], c[1]), func(t *testing.T) {
			cost, burst := c[0], c[1]
			num, den := floorFraction(cost, burst)
			if num < 1 || num > den || den > scaleTerms {
				t.Fatalf("%d/%d: terms out of [1, 2^16] or above 1", num, den)
			}
			// Products of terms of at most 2^40 and 2^16: below 2^63.
			if num*burst < cost*den {
				t.Fatalf("%d/%d is below %d/%d", num, den, cost, burst)
			}
			for d := int64(1); d <= scaleTerms; d++ {
				n := (cost*d + burst - 1) / burst // the least n/d ≥ cost/burst
				if n*den < num*d {
					t.Fatalf("%d/%d: %d/%d is nearer above %d/%d", num, den, n, d, cost, burst)
				}
			}
		})
	}
}
