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
	return []Scenario{{Name: "buckets at the bound of exactness, after clock steps back of years", Steps: s}, longLog()}
}

// longLog returns a scenario of sliding logs and leases of hundreds of
// entries: a wait that reads entries far from the oldest, expiries that
// drop many at once, refunds and releases in the middle.
func longLog() Scenario {
	log := sluice.SlidingLog(200, sec).Named("log")
	conc := sluice.Concurrency(200, 10*sec).Named("conc")
	s := repeat(200, ms, check("u", log, 1), check("v", conc, 1))
	s = append(s,
		step(0, check("u", log, 150)).want(false), // waits for the 150th entry
		step(0, check("u", log, 1)).refunding(10).refunding(100).refunding(199).want(true),
		step(0, check("u", log, 2), check("v", conc, 1)).releasing(20, 21, 140, 149).want(true, true),
		step(0, check("u", log, 1), check("v", conc, 2)).want(false, true),
		step(sec-70*ms, check("u", log, 128), check("v", conc, 3)).want(true, true), // 128 entries leave at once
		step(0, check("u", log, 1), check("v", conc, 1)).want(false, false),
		step(500*ms, check("u", log, 200), check("v", conc, 150)),
		step(10*sec, check("u", log, 200), check("v", conc, 200)).want(true, true),
	)
	return Scenario{Name: "sliding logs and leases of hundreds of entries", Steps: s}
}
