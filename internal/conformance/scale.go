package conformance

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// scaleScenarios returns scenarios of limits scaled (sluice.Limit.Scale,
// a degradation level's factor) mid-window and back: the same state read
// under other quantities, bursts and, for the buckets, other rates.
func scaleScenarios() []Scenario {
	limits := []sluice.Limit{
		sluice.FixedWindow(3, sec),
		sluice.SlidingLog(3, sec),
		sluice.SlidingCounter(100, time.Minute),
		sluice.TokenBucket(3, sec),
		sluice.TokenBucket(1_000_000, day).WithBurst(999_999),
		sluice.LeakyBucket(3, sec).WithBurst(4),
		sluice.LeakyBucket(999_999, sec).WithBurst(7).WithMaxWait(700 * ms),
		sluice.GCRA(7, 10*sec).WithBurst(3),
		sluice.GCRA(sluice.MaxQuantity, sluice.MaxWindow),
		sluice.Concurrency(3, 10*sec),
		sluice.Calendar(1000, sluice.Month),
	}
	var s []Step
	for i, l := range limits {
		key := string(rune('a' + i))
		third, most, least := l.Scale(1, 3), l.Scale(2, 3), l.Scale(1, 1<<16)
		s = append(s,
			step(0, check(key, l, l.Burst())).want(true),
			step(100*ms, check(key, third, 1)),
			step(0, check(key, third, 0)),
			step(200*ms, check(key, l, 1)),
			step(sec/3, check(key, most, 1)),
			step(0, check(key, least, 0)),
			step(0, check(key, least, 1)),
			step(sec, check(key, third, third.Burst())),
			step(0, check(key, l, 0)),
			step(-sec, check(key, most, 1)),
			step(time.Minute, check(key, least, 1), check(key+"2", most, most.Burst())),
			step(0, check(key, l, l.Burst()), check(key+"2", third, 1)),
		)
	}
	return []Scenario{{Name: "a limit scaled down mid-window and back reads one state", Steps: s}}
}
