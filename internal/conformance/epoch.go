package conformance

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// epochScenarios returns scenarios played before sluice.Epoch
// (2020-01-01), where times, receipts (Status.Charged) and lease stamps
// are negative µs: times the algorithms decide at as at any other (see
// sluice.Limit.Decide), at which a store gives back leases and refunds
// charges as it does after Epoch, a clock step back among them.
func epochScenarios() []Scenario {
	before := sluice.Epoch.Add(-day)
	fw := sluice.FixedWindow(1, time.Hour).Named("fw")
	counter := sluice.SlidingCounter(1, time.Hour).Named("counter")
	log := sluice.SlidingLog(1, time.Hour).Named("log")
	conc := sluice.Concurrency(1, time.Hour)
	fw3 := sluice.FixedWindow(3, sec).Named("fw3")
	counter100 := sluice.SlidingCounter(100, time.Minute).Named("counter100")
	log3 := sluice.SlidingLog(3, sec).Named("log3")
	return []Scenario{
		{Name: "before Epoch a released lease frees its slot", Start: before, Steps: steps(
			step(0, check("u", conc, 1)).want(true),
			step(sec, check("u", conc, 1)).want(false),
			step(0, check("u", conc, 1)).releasing(0).want(true),
			step(0, check("u", conc, 1)).want(false),
		)},
		{Name: "before Epoch a refund gives back a fixed window's, a sliding counter's and a sliding log's charge", Start: before, Steps: steps(
			step(0, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).want(true, true, true),
			step(sec, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).want(false, false, false),
			step(0, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).refunding(0).want(true, true, true),
			step(0, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).want(false, false, false),
		)},
		{Name: "before Epoch a refund after the clock stepped back gives back what the later window counted", Start: before.Add(500 * ms), Steps: steps(
			step(0, check("u", fw3, 3), check("u", counter100, 100), check("u", log3, 3)).want(true, true, true),
			step(-800*ms, check("u", fw3, 1), check("u", counter100, 1), check("u", log3, 1)).want(false, false, false),
			step(0, check("u", fw3, 1), check("u", counter100, 1), check("u", log3, 1)).refunding(0, 1, 1, 1).want(true, true, true),
			step(-5*time.Minute, check("u", fw3, 1), check("u", counter100, 1), check("u", log3, 1)).want(false, false, false),
			step(0, check("u", fw3, 1), check("u", counter100, 1), check("u", log3, 1)).refunding(2).want(true, true, true),
			step(5*time.Minute+time.Hour, check("u", fw3, 3), check("u", counter100, 100), check("u", log3, 3)).refunding(4).want(true, true, true),
		)},
	}
}
