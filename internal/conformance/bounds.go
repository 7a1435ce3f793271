package conformance

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// boundScenarios returns scenarios of buckets at the bound of exactness:
// a deepest debt just short of 2^53 ticks, or refilling in just under
// 2^52 µs, whose waits after a clock step back of years come near 2^53 µs.
func boundScenarios() []Scenario {
	const year = 365 * day
	limits := []sluice.Limit{
		sluice.TokenBucket(1, time.Duration(1<<20)*us).WithBurst(1<<32 - 1),
		sluice.GCRA(1, sluice.MaxWindow).WithBurst(127),
		sluice.LeakyBucket(1, sluice.MaxWindow).WithBurst(127).WithMaxWait(sluice.MaxWindow - us),
		sluice.LeakyBucket(3, time.Duration(1<<20)*us).WithBurst(3<<31 - 1),
		sluice.GCRA(7, time.Duration(1<<41)*us).WithBurst(1<<12 - 1),
	}
	var s []Step
	for i, l := range limits {
		key := string(rune('a' + i))
		s = append(s,
			step(0, check(key, l, l.Burst())).want(true),
			step(-5*year-7*us, check(key, l, 1)).want(false),
			step(0, check(key, l, 0)),
			step(3*year+us, check(key, l, l.Burst())).want(false),
			step(2*year+6*us, check(key, l, 1)).want(false),
			step(-us, check(key, l, 0)),
		)
	}
	return []Scenario{{Name: "buckets at the bound of exactness, after clock steps back of years", Steps: s}}
}
