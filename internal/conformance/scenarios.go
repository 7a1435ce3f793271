package conformance

import (
	"math"
	"time"

	"github.com/sluice-dev/sluice"
)

// Scenario is a named sequence of steps, each a clock move and one call.
type Scenario struct {
	Name string
	// Start is the clock's time before the first step; DefaultStart when
	// zero.
	Start time.Time
	Steps []Step
}

// Step moves the clock by Advance (backwards when negative), gives back
// the concurrency leases taken by the calls of the steps listed in Release
// (through sluice.Releaser), then the charges of the calls Refund lists
// (through sluice.Refunder), and then decides Checks as one call (none is
// fine when the step only gives back).
type Step struct {
	Advance time.Duration
	Release []int
	Refund  []Refund
	Checks  []sluice.Check
	// Want, when set, is the Allowed of each check that the scenario is
	// written to exercise; the suite fails if the reference disagrees, so
	// that a scenario never silently stops testing what its name says.
	Want []bool
}

// DefaultStart is 2026-11-30T12:00:00Z: on a whole hour, so windows of a
// second, minute or hour start exactly there.
var DefaultStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// step builds a Step of checks after advancing d.
func step(d time.Duration, checks ...sluice.Check) Step {
	return Step{Advance: d, Checks: checks}
}

// releasing makes s first give back the leases of the calls of steps.
func (s Step) releasing(steps ...int) Step { s.Release = steps; return s }

// Refund gives back the charges (Status.Charged) of the call of an earlier
// step, each check at its own cost, or at Costs[i] when Costs is set: less
// gives back part of the charge, more (which the Refunder contract
// forbids) at most what the window or entry still counts.
type Refund struct {
	Step  int
	Costs []int64
}

// refunding makes s first give back the charges of the call of step k, at
// costs (one per check of that call) when given.
func (s Step) refunding(k int, costs ...int64) Step {
	if len(costs) == 0 {
		costs = nil
	}
	s.Refund = append(s.Refund, Refund{Step: k, Costs: costs})
	return s
}

// want sets the expected Allowed of each check.
func (s Step) want(allowed ...bool) Step { s.Want = allowed; return s }

func check(key string, l sluice.Limit, cost int64) sluice.Check {
	return sluice.Check{Key: key, Limit: l, Cost: cost}
}

// repeat returns n steps of the same checks, dt apart (the first after dt).
func repeat(n int, dt time.Duration, checks ...sluice.Check) []Step {
	out := make([]Step, n)
	for i := range out {
		out[i] = step(dt, checks...)
	}
	return out
}

func steps(parts ...any) []Step {
	var out []Step
	for _, p := range parts {
		switch p := p.(type) {
		case Step:
			out = append(out, p)
		case []Step:
			out = append(out, p...)
		}
	}
	return out
}

const (
	us  = time.Microsecond
	ms  = time.Millisecond
	sec = time.Second
	day = 24 * time.Hour
)

// Scenarios returns the hand-written scenarios, one behaviour each.
func Scenarios() []Scenario {
	fw := sluice.FixedWindow(3, sec).Named("fw")
	log := sluice.SlidingLog(3, sec).Named("log")
	counter := sluice.SlidingCounter(100, time.Minute).Named("counter")
	bigCounter := sluice.SlidingCounter(1_000_000, day)
	hugeCounter := sluice.SlidingCounter(sluice.MaxQuantity, sluice.MaxWindow)
	longestFixed := sluice.FixedWindow(sluice.MaxQuantity, sluice.MaxFixedWindow).Named("longest")
	tb3 := sluice.TokenBucket(3, sec).Named("tb")
	tbBurst := sluice.TokenBucket(5, sec).WithBurst(10)
	meter := sluice.LeakyBucket(3, sec).WithBurst(4).Named("meter")
	queue := sluice.LeakyBucket(3, sec).WithBurst(2).WithMaxWait(700 * ms).Named("queue")
	gcra := sluice.GCRA(3, sec).Named("gcra")
	gcra7 := sluice.GCRA(7, 10*sec).WithBurst(3).Named("gcra7")
	perSecond := sluice.PerSecond(2)
	perMinute := sluice.FixedWindow(5, time.Minute).Named("per-minute")
	perDay := sluice.SlidingLog(8, day).Named("per-day")
	conc := sluice.Concurrency(3, 10*sec)
	monthly := sluice.Calendar(3, sluice.Month).Named("monthly")
	weekly := sluice.Calendar(1, sluice.Week).Named("weekly")
	tokyoDaily := sluice.Calendar(1, sluice.Day).WithOffset(-9 * time.Hour).Named("tokyo-daily")
	yearly := sluice.Calendar(2, sluice.Year).Named("yearly")
	all := []sluice.Limit{fw, log, counter, tb3, meter, queue, gcra, gcra7, conc}

	out := []Scenario{
		{Name: "fixed window admits q per window and refuses until the window ends", Steps: steps(
			step(0, check("u", fw, 1)).want(true),
			step(100*ms, check("u", fw, 2)).want(true),
			step(100*ms, check("u", fw, 1)).want(false),
			step(799*ms, check("u", fw, 1)).want(false),
			step(1*ms, check("u", fw, 3)).want(true),
			step(999999*us, check("u", fw, 1)).want(false),
			step(1*us, check("u", fw, 1)).want(true),
		)},
		{Name: "fixed window admits 2q across a boundary (the boundary burst)", Start: DefaultStart.Add(-time.Millisecond), Steps: steps(
			step(0, check("u", fw, 3)).want(true),
			step(ms, check("u", fw, 3)).want(true),
			step(0, check("u", fw, 1)).want(false),
		)},
		{Name: "sliding log admits q in any window and frees the oldest first", Steps: steps(
			step(0, check("u", log, 1)).want(true),
			step(0, check("u", log, 1)).want(true), // a duplicate timestamp
			step(300*ms, check("u", log, 1)).want(true),
			step(100*ms, check("u", log, 1)).want(false),
			step(599*ms, check("u", log, 2)).want(false),
			step(1*ms, check("u", log, 2)).want(true), // both entries at 0 leave at 1s
			step(299*ms, check("u", log, 1)).want(false),
			step(1*ms, check("u", log, 1)).want(true),
			step(10*sec, check("u", log, 0)).want(true),
		)},
		{Name: "sliding log retry-after counts the units of the entries it waits for", Steps: steps(
			step(0, check("u", log, 2)).want(true),
			step(200*ms, check("u", log, 1)).want(true),
			step(100*ms, check("u", log, 3)).want(false), // needs all three: the 200ms entry's expiry
			step(100*ms, check("u", log, 2)).want(false), // needs the first entry's two
			step(600*ms, check("u", log, 2)).want(true),
		)},
		{Name: "sliding counter weights the previous window: 100 per minute admits 17 10s into the next", Steps: steps(
			step(0, check("u", counter, 100)).want(true),
			step(time.Minute+10*sec, check("u", counter, 18)).want(false), // ⌊100·50/60⌋ = 83
			step(0, check("u", counter, 17)).want(true),
			step(0, check("u", counter, 1)).want(false),
			step(sec, check("u", counter, 3)).want(false), // ⌊100·49/60⌋ = 81
			step(0, check("u", counter, 2)).want(true),
			step(5*sec, check("u", counter, 2)).want(true),
			step(0, check("u", counter, 0)),
		)},
		{Name: "sliding counter with 1,000,000 per day keeps prev·(w−e)/w exact", Start: DefaultStart.Truncate(day), Steps: steps(
			step(3*time.Hour, check("u", bigCounter, 999_999)).want(true),
			step(0, check("u", bigCounter, 2)).want(false),
			step(day-3*time.Hour+7*time.Hour+13*us, check("u", bigCounter, 291_669)).want(false), // ⌊999,999·(w−e)/w⌋ = 708,332
			step(0, check("u", bigCounter, 291_668)).want(true),
			step(time.Hour+1*us, check("u", bigCounter, 41_668)).want(false), // 666,665 + 291,668
			step(0, check("u", bigCounter, 41_667)).want(true),
			step(0, check("u", bigCounter, 1)).want(false),
			step(13*time.Hour+17*us, check("u", bigCounter, 500_000)),
			step(day, check("u", bigCounter, 0)),
		)},
		{Name: "sliding counter at the largest quantity and window", Start: sluice.Epoch.Add(3 * sluice.MaxWindow), Steps: steps(
			step(123456789*us, check("u", hugeCounter, sluice.MaxQuantity-1)).want(true),
			step(sluice.MaxWindow-777*us, check("u", hugeCounter, 1<<39)),
			step(0, check("u", hugeCounter, 1)),
			step(sluice.MaxWindow/3, check("u", hugeCounter, 1<<38)),
			step(sluice.MaxWindow/3, check("u", hugeCounter, 0)),
		)},
		{Name: "fixed window of MaxFixedWindow counts to its end and starts afresh", Start: sluice.Epoch.Add(4*sluice.MaxFixedWindow - 2*sec), Steps: steps(
			step(0, check("u", longestFixed, sluice.MaxQuantity-1)).want(true),
			step(sec, check("u", longestFixed, 2)).want(false),
			step(0, check("u", longestFixed, 1)).want(true),
			step(sec-us, check("u", longestFixed, 1)).want(false),
			step(us, check("u", longestFixed, sluice.MaxQuantity)).want(true),
			step(sluice.MaxFixedWindow-us, check("u", longestFixed, 1)).want(false),
			step(us, check("u", longestFixed, 0)),
		)},
		{Name: "calendar months, weeks and a zone's days count the calendar's periods", Start: time.Date(2028, 2, 29, 23, 0, 0, 0, time.UTC), Steps: steps(
			step(0, check("u", monthly, 3), check("u", weekly, 1), check("u", tokyoDaily, 1)).want(true, true, true),
			step(time.Hour-us, check("u", monthly, 1)).want(false), // February 2028's last µs
			step(us, check("u", monthly, 3)).want(true),            // March
			step(0, check("u", monthly, 1)).want(false),
			// 2028-03-01 is a Wednesday: the week runs to Monday the 6th.
			step(0, check("u", weekly, 1)).want(false),
			step(5*day-us, check("u", weekly, 1)).want(false),
			step(us, check("u", weekly, 1), check("u", tokyoDaily, 1)).want(true, true),
			// Tokyo's day starts at 15:00 UTC.
			step(15*time.Hour-us, check("u", tokyoDaily, 1)).want(false),
			step(us, check("u", tokyoDaily, 1)).want(true),
			// A step back into February counts against March.
			step(-7*day, check("u", monthly, 1)).want(false),
			step(31*day+7*day, check("u", monthly, 3)).want(true), // April
			step(0, check("u", yearly, 2)).want(true),
			step(time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC).Sub(time.Date(2028, 4, 6, 15, 0, 0, 0, time.UTC))-us, check("u", yearly, 1)).want(false),
			step(us, check("u", yearly, 2)).want(true),
		)},
		{Name: "token bucket refills 3 per second exactly, a unit every 333⅓ ms", Steps: steps(
			step(0, check("u", tb3, 3)).want(true),
			step(333*ms, check("u", tb3, 1)).want(false), // 0.999 tokens
			step(334*ms, check("u", tb3, 2)).want(true),  // 2.001
			step(333*ms, check("u", tb3, 1)).want(true),  // exactly 1.000
			step(333333*us, check("u", tb3, 1)).want(false),
			step(1*us, check("u", tb3, 1)).want(true),
			repeat(5, 111111*us, check("u", tb3, 1)),
			step(2*sec, check("u", tb3, 0)),
		)},
		{Name: "token bucket with a burst above its rate", Steps: steps(
			step(0, check("u", tbBurst, 10)).want(true),
			step(0, check("u", tbBurst, 1)).want(false),
			step(sec, check("u", tbBurst, 6)).want(false),
			step(0, check("u", tbBurst, 5)).want(true),
			step(3*sec, check("u", tbBurst, 0)),
		)},
		{Name: "leaky bucket meter refuses what would overflow", Steps: steps(
			step(0, check("u", meter, 4)).want(true),
			step(100*ms, check("u", meter, 1)).want(false),
			step(233334*us, check("u", meter, 1)).want(true),
			step(0, check("u", meter, 2)).want(false),
			repeat(4, 250*ms, check("u", meter, 1)),
		)},
		{Name: "leaky bucket queue admits with a delay up to the max wait", Steps: steps(
			step(0, check("u", queue, 2)).want(true),
			step(0, check("u", queue, 1)).want(true),  // delay 333⅓ms → 334ms
			step(0, check("u", queue, 1)).want(true),  // delay 667ms
			step(0, check("u", queue, 1)).want(false), // would wait 1s > 700ms
			step(300*ms, check("u", queue, 1)).want(true),
			repeat(6, 100*ms, check("u", queue, 1)),
			step(3*sec, check("u", queue, 2)).want(true),
		)},
		{Name: "GCRA at 3 per second and 7 per 10 seconds with burst 3", Steps: steps(
			step(0, check("a", gcra, 2), check("b", gcra7, 3)).want(true, true),
			step(0, check("a", gcra, 1)).want(true),
			step(0, check("a", gcra, 1)).want(false),
			step(333*ms, check("a", gcra, 1), check("b", gcra7, 1)).want(false, false),
			step(1*ms, check("a", gcra, 1)).want(true),
			step(1*sec, check("b", gcra7, 1)).want(false),
			step(429*ms, check("b", gcra7, 1)).want(true), // 10/7 s = 1.428571…s
			repeat(8, 142857*us, check("a", gcra, 1), check("b", gcra7, 1)),
		)},
		{Name: "cost above burst is refused with retry never and consumes nothing", Steps: func() []Step {
			var s []Step
			for i, l := range all {
				key := string(rune('a' + i))
				s = append(s,
					step(0, check(key, l, l.Burst()+1)).want(false),
					step(0, check(key, l, math.MaxInt64)).want(false),
					step(0, check(key, l, 1)).want(true),
				)
			}
			return s
		}()},
		{Name: "a peek is allowed, reports the state and consumes nothing", Steps: func() []Step {
			var s []Step
			for i, l := range all {
				key := string(rune('a' + i))
				s = append(s,
					step(0, check(key, l, 0)).want(true),
					step(0, check(key, l, l.Burst())).want(true),
					step(10*ms, check(key, l, 0)).want(true),
					step(0, check(key, l, 0)).want(true),
				)
			}
			return s
		}()},
		{Name: "per-second, per-minute and per-day on one key are admitted together", Steps: steps(
			repeat(3, 0, check("u", perSecond, 1), check("u", perMinute, 1), check("u", perDay, 1)),
			step(sec, check("u", perSecond, 1), check("u", perMinute, 1), check("u", perDay, 1)).want(true, true, true),
			step(0, check("u", perSecond, 1), check("u", perMinute, 1), check("u", perDay, 1)).want(true, true, true),
			step(sec, check("u", perSecond, 1), check("u", perMinute, 1), check("u", perDay, 1)).want(true, true, true),
			step(sec, check("u", perSecond, 1), check("u", perMinute, 1), check("u", perDay, 1)).want(true, false, true),
			step(time.Minute, check("u", perSecond, 2), check("u", perMinute, 2), check("u", perDay, 2)).want(true, true, true),
			step(time.Minute, check("u", perSecond, 2), check("u", perMinute, 2), check("u", perDay, 2)).want(true, true, false),
			step(day, check("u", perSecond, 2), check("u", perMinute, 2), check("u", perDay, 2)).want(true, true, true),
		)},
		{Name: "a batch where one limit refuses consumes nothing", Steps: steps(
			step(0, check("u", tb3, 2), check("u", log, 3)).want(true, true),
			step(0, check("u", tb3, 1), check("u", log, 1)).want(true, false),
			step(0, check("u", tb3, 1)).want(true),
			step(0, check("u", tb3, 1), check("u", fw, 3), check("u", counter, 100)).want(false, true, true),
			step(0, check("u", fw, 3), check("u", counter, 100)).want(true, true),
		)},
		{Name: "a shadow limit reports its refusal but never refuses, and consumes only when it fits", Steps: steps(
			step(0, check("u", fw, 2), check("u", log.WithShadow(true), 2)).want(true, true),
			step(0, check("u", fw, 1), check("u", log.WithShadow(true), 2)).want(true, false),
			step(0, check("u", log.WithShadow(true), 1)).want(true),
			step(0, check("u", fw, 1), check("u", log.WithShadow(true), 1)).want(false, false),
			step(0, check("u", tb3.WithShadow(true), 4)).want(false),
			step(0, check("u", tb3.WithShadow(true), 3), check("u", gcra, 3)).want(true, true),
			step(0, check("u", tb3.WithShadow(true), 1), check("u", gcra, 1)).want(false, false),
		)},
		{Name: "a clock that steps back never creates capacity", Steps: func() []Step {
			var s []Step
			for i, l := range all {
				key := string(rune('a' + i))
				s = append(s,
					step(0, check(key, l, l.Burst())),
					step(-3*sec, check(key, l, 1)),
					step(0, check(key, l, 0)),
					step(2*sec, check(key, l, 1)),
					step(1500*ms, check(key, l, 1)),
					step(-200*ms, check(key, l, 1)),
					step(-5*time.Minute, check(key, l, 1)),
					step(5*time.Minute, check(key, l, 1)),
					step(300*ms, check(key, l, 0)),
				)
			}
			return s
		}()},
		{Name: "a GCRA debt far past any admissible one, after a long step back", Steps: steps(
			step(0, check("u", sluice.GCRA(999_999, sec), 999_999)).want(true),
			step(-150*day, check("u", sluice.GCRA(999_999, sec), 5)).want(false),
			step(0, check("u", sluice.GCRA(999_999, sec), 0)),
			step(150*day, check("u", sluice.GCRA(999_999, sec), 5)).want(false),
			step(sec, check("u", sluice.GCRA(999_999, sec), 5)).want(true),
		)},
		{Name: "concurrency leases hold units until released or expired", Steps: steps(
			step(0, check("u", conc, 2)).want(true),
			step(0, check("u", conc, 1)).want(true), // the same instant: a lease of its own
			step(ms, check("u", conc, 1)).want(false),
			step(ms, check("u", conc, 1)).releasing(1).want(true),
			step(ms, check("u", conc, 2)).releasing(0).want(true),
			step(ms, check("u", conc, 1)).releasing(0, 1).want(false), // released twice: nothing left to give
			step(10*sec-3*ms, check("u", conc, 1)).want(false),
			step(ms, check("u", conc, 1)).want(true), // step 3's lease expired
			step(ms).releasing(4, 7),
			step(0, check("u", conc, 3)).want(true),
			step(0, check("v", conc, 1), check("v", fw, 3)).want(true, true),
			step(0, check("v", conc, 1), check("v", fw, 1)).want(true, false),
			step(0).releasing(10, 11),
			step(0, check("v", conc, 3)).want(true),
		)},
		{Name: "leases of one instant are distinct: a lease released twice frees one slot", Steps: steps(
			step(0, check("u", conc, 1)).want(true),
			step(0, check("u", conc, 1)).want(true),
			step(0, check("u", conc, 1)).want(true),
			step(0).releasing(0),
			step(0).releasing(0), // finds nothing: steps 1 and 2 hold theirs
			step(0, check("u", conc, 1)).want(true),
			step(0, check("u", conc, 1)).want(false),
			step(0).releasing(1),
			step(0, check("u", conc, 1)).want(true),
		)},
		{Name: "a global limit next to per-user limits spans subjects", Steps: steps(
			step(0, check("global", fw.Named("global"), 1), check("alice", tb3, 1)).want(true, true),
			step(0, check("global", fw.Named("global"), 1), check("bob", tb3, 3)).want(true, true),
			step(0, check("global", fw.Named("global"), 1), check("bob", tb3, 1)).want(true, false),
			step(0, check("global", fw.Named("global"), 1), check("alice", tb3, 1)).want(true, true),
			step(0, check("global", fw.Named("global"), 1), check("carol", tb3, 1)).want(false, true),
			step(0, check("carol", tb3, 3)).want(true),
			step(sec, check("alice", log, 1), check("global", fw.Named("global"), 1), check("bob", gcra, 1), check("carol", counter, 1)).want(true, true, true, true),
		)},
		{Name: "a limit whose parameters change keeps and clamps its state", Steps: steps(
			step(0, check("u", sluice.TokenBucket(10, sec), 10)).want(true),
			step(100*ms, check("u", sluice.TokenBucket(3, sec), 1)),
			step(0, check("u", sluice.TokenBucket(3, sec).WithBurst(20), 2)),
			step(0, check("u", sluice.GCRA(10, sec).Named("g"), 10)).want(true),
			step(50*ms, check("u", sluice.GCRA(7, sec).Named("g"), 1)),
			step(50*ms, check("u", sluice.GCRA(7, sec).WithBurst(30).Named("g"), 5)),
			step(0, check("u", sluice.FixedWindow(10, time.Minute).Named("f"), 9)).want(true),
			step(0, check("u", sluice.FixedWindow(5, time.Minute).Named("f"), 1)).want(false),
			step(0, check("u", sluice.FixedWindow(5, 7*sec).Named("f"), 0)),
			step(0, check("u", sluice.SlidingCounter(10, time.Minute).Named("c"), 9)).want(true),
			step(time.Minute, check("u", sluice.SlidingCounter(4, 30*sec).Named("c"), 1)),
			step(0, check("u", sluice.SlidingLog(10, time.Minute).Named("l"), 9)).want(true),
			step(sec, check("u", sluice.SlidingLog(4, 30*sec).Named("l"), 1)).want(false),
		)},
		{Name: "a bucket's spent tokens stay spent under a reload or level that changes its rate", Steps: func() []Step {
			// A debt is a refill time: all 10 of 10/h spent is an hour, all
			// of 7/h burst 7 too; 5 spent is half an hour, 3 of the 7 (3.5
			// rounded down). Back at 10/h, the hour is still owed.
			var s []Step
			for i, mk := range []func(int64) sluice.Limit{
				func(q int64) sluice.Limit { return sluice.TokenBucket(q, time.Hour) },
				func(q int64) sluice.Limit { return sluice.LeakyBucket(q, time.Hour) },
				func(q int64) sluice.Limit { return sluice.LeakyBucket(q, time.Hour).WithMaxWait(time.Minute) },
				func(q int64) sluice.Limit { return sluice.GCRA(q, time.Hour) },
			} {
				name := "r" + string(rune('0'+i))
				full, scaled := mk(10).Named(name), mk(7).Named(name)
				s = append(s,
					step(0, check("spent", full, 10)).want(true),
					step(0, check("spent", scaled, 1)).want(false),
					step(0, check("spent", full, 1)).want(false),
					step(0, check("half", full, 5)).want(true),
					step(0, check("half", scaled, 4)).want(false),
					step(0, check("half", scaled, 3)).want(true),
				)
			}
			return s
		}()},
		{Name: "a limit renamed under one ID keeps its clients' state", Steps: steps(
			step(0, check("u", fw.Named("old").WithID("x"), 3), check("u", tb3.Named("a").WithID("t"), 3)).want(true, true),
			step(0, check("u", fw.Named("new").WithID("x"), 1)).want(false),
			step(0, check("u", tb3.Named("b").WithID("t"), 1), check("u", fw.Named("x"), 0)).want(false, true),
			step(sec, check("u", fw.Named("new").WithID("x"), 3), check("u", tb3.Named("b").WithID("t").Scale(1, 3), 1)).want(true, true),
			// The scaled bucket's one unit spent is its second of refill:
			// the same second of tb3's, whose 3 are all spent too.
			step(0, check("u", fw.Named("x"), 1), check("u", tb3.Named("t"), 1)).want(false, false),
			step(0, check("u", fw.Named("other").WithID("x").WithShadow(true), 0)),
		)},
		{Name: "a state written under another algorithm counts as a key never seen", Steps: steps(
			step(0, check("u", fw.Named("x"), 3)).want(true),
			step(0, check("u", fw.Named("x"), 1)).want(false),
			step(0, check("u", log.Named("x"), 3)).want(true),
			step(0, check("u", log.Named("x"), 1)).want(false),
			step(0, check("u", gcra.Named("x"), 0)).want(true),
		)},
		{Name: "a state long idle is worth a fresh one", Steps: steps(
			step(0, check("u", fw, 3), check("u", log, 3), check("u", counter, 100), check("u", tb3, 3), check("u", gcra, 3), check("u", queue, 2)),
			step(400*day, check("u", fw, 3), check("u", log, 3), check("u", counter, 100), check("u", tb3, 3), check("u", gcra, 3), check("u", queue, 2)).want(true, true, true, true, true, true),
		)},
		{Name: "many limits of one call", Steps: func() []Step {
			var checks []sluice.Check
			for i := range 20 { // more than the memory store's scratch space
				l := all[i%len(all)].Named("l" + string(rune('a'+i)))
				checks = append(checks, check(string(rune('a'+i%3)), l, 1))
			}
			return repeat(6, 150*ms, checks...)
		}()},
	}
	out = append(out, refundScenarios()...)
	out = append(out, boundScenarios()...)
	out = append(out, epochScenarios()...)
	return append(out, scaleScenarios()...)
}
