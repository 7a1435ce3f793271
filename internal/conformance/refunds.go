package conformance

import (
	"time"

	"github.com/sluice-dev/sluice"
)

// refundScenarios returns the hand-written scenarios of sluice.Refunder:
// charges given back whole, in part and beyond the charge, within and after
// the window that counted them, at the bounds, after a clock step back, and
// in calls where other algorithms (which are not refunded) took part.
func refundScenarios() []Scenario {
	fw := sluice.FixedWindow(3, sec).Named("fw")
	counter := sluice.SlidingCounter(100, time.Minute).Named("counter")
	log := sluice.SlidingLog(3, sec).Named("log")
	log5 := sluice.SlidingLog(5, sec).Named("log5")
	tb3 := sluice.TokenBucket(3, sec).Named("tb")
	conc := sluice.Concurrency(3, 10*sec)
	monthly := sluice.Calendar(3, sluice.Month).Named("monthly")
	longest := sluice.FixedWindow(sluice.MaxQuantity, sluice.MaxFixedWindow).Named("longest")
	huge := sluice.SlidingCounter(sluice.MaxQuantity, sluice.MaxWindow).Named("huge")
	big := sluice.SlidingLog(sluice.MaxQuantity, sluice.MaxWindow).Named("big")
	q := int64(sluice.MaxQuantity)
	return []Scenario{
		{Name: "a fixed window's refund frees its units while that window counts them", Steps: steps(
			step(0, check("u", fw, 2)).want(true),
			step(0, check("u", fw, 1)).want(true),
			step(100*ms, check("u", fw, 1)).want(false),
			step(0, check("u", fw, 2)).refunding(0).want(true),
			step(0, check("u", fw, 1)).want(false),
			step(900*ms, check("u", fw, 3)).refunding(1).want(true), // a new window, whatever the old one gave back
			step(0, check("u", fw, 1)).refunding(3, 5).want(false),  // step 3's window is over
			step(0, check("u", fw, 1)).refunding(5, 1).want(true),   // part of a charge
			step(0, check("u", fw, 1)).want(false),
			step(0, check("u", fw, 3)).refunding(7, 10).want(true), // beyond the charge: the count goes to 0
			step(0, check("u", fw, 0)),
		)},
		{Name: "a sliding counter's refund comes out of the current count, then out of the previous", Steps: steps(
			step(0, check("u", counter, 60)).want(true),
			step(10*sec, check("u", counter, 40)).want(true),
			step(0, check("u", counter, 1)).want(false),
			step(time.Minute, check("u", counter, 50)).refunding(1).want(true), // ⌊60·50/60⌋ + 50
			step(0, check("u", counter, 1)).want(false),
			step(0, check("u", counter, 50)).refunding(3).want(true),
			step(time.Minute, check("u", counter, 60)).refunding(0).want(false), // ⌊50·50/60⌋ = 41
			step(0, check("u", counter, 59)).want(true),
			step(0, check("u", counter, 0)).refunding(7, 100),
			step(2*time.Minute, check("u", counter, 0)).refunding(5),
		)},
		{Name: "a sliding log's refund takes units out of the entries of the charge's instant", Steps: steps(
			step(0, check("u", log, 1)).want(true),
			step(0, check("u", log, 1)).want(true), // the same instant as step 0
			step(300*ms, check("u", log, 1)).want(true),
			step(0, check("u", log, 1)).want(false),
			step(0, check("u", log, 1)).refunding(0).want(true),
			step(100*ms, check("u", log, 2)).refunding(2).want(false),
			step(0, check("u", log, 1)).want(true),
			step(0, check("u", log, 1)).refunding(1, 5).want(true), // beyond the charge: what the instant holds
			step(0, check("u", log, 1)).want(false),
			step(600*ms, check("u", log, 1)).refunding(4).want(true),
			step(sec, check("u", log, 0)).refunding(9),
		)},
		{Name: "a sliding log refunded in its middle and at its oldest entry waits for the entries left", Steps: steps(
			step(0, check("u", log5, 2)).want(true),
			step(100*ms, check("u", log5, 1)).want(true),
			step(100*ms, check("u", log5, 2)).want(true),
			step(100*ms, check("u", log5, 2)).refunding(1).want(false), // waits for step 0's two at 1s
			step(0, check("u", log5, 1)).want(true),
			step(0, check("u", log5, 3)).refunding(0).want(false), // waits for step 2's two at 1.2s
			step(0, check("u", log5, 2)).want(true),
			step(0, check("u", log5, 1)).refunding(4, 6).want(true), // beyond the charge: what the instant holds
			step(0, check("u", log5, 3)).want(false),
			step(0, check("u", log5, 2)).want(true),
		)},
		{Name: "a refund of a call gives back its windows and log, not its bucket or lease", Steps: steps(
			step(0, check("u", tb3, 2), check("u", conc, 1), check("u", fw.WithShadow(true), 2), check("global", log, 2)).want(true, true, true, true),
			step(0, check("u", tb3, 1), check("u", fw, 3), check("global", log, 3)).refunding(0).want(true, true, true),
			step(0, check("u", tb3, 1), check("u", conc, 1)).want(false, true), // refused: charges nothing
			step(0, check("u", conc, 2), check("global", log, 1)).refunding(2).want(true, false),
			step(0, check("u", fw, 1), check("global", log, 1)).refunding(1, 0, 3, 1).want(true, true),
			step(0, check("u", fw, 3), check("global", log, 1)).refunding(4, 1, 0).want(true, false),
		)},
		{Name: "a refund after the clock stepped back gives back what the later window counted", Start: DefaultStart.Add(500 * ms), Steps: steps(
			step(0, check("u", fw, 3), check("u", counter, 100), check("u", log, 3)).want(true, true, true),
			step(-800*ms, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).want(false, false, false),
			step(0, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).refunding(0, 1, 1, 1).want(true, true, true),
			step(-5*time.Minute, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).want(false, false, false),
			step(0, check("u", fw, 1), check("u", counter, 1), check("u", log, 1)).refunding(2).want(true, true, true),
			step(5*time.Minute+time.Hour, check("u", fw, 3), check("u", counter, 100), check("u", log, 3)).refunding(4).want(true, true, true),
		)},
		{Name: "a calendar month's refund ends with the month, also stepped back into", Start: time.Date(2028, 2, 29, 23, 0, 0, 0, time.UTC), Steps: steps(
			step(0, check("u", monthly, 3)).want(true),
			step(time.Hour-us, check("u", monthly, 1)).refunding(0, 1).want(true), // February's last µs
			step(us, check("u", monthly, 3)).refunding(1).want(true),              // March
			step(-2*time.Hour, check("u", monthly, 1)).want(false),                // counts against March
			step(0, check("u", monthly, 2)).refunding(2, 2).want(true),
			step(0, check("u", monthly, 1)).want(false),
			step(2*time.Hour, check("u", monthly, 1)).refunding(4, 2).want(true),
		)},
		{Name: "refunds at the largest quantity and windows stay exact", Start: sluice.Epoch.Add(4*sluice.MaxFixedWindow - 2*sec), Steps: steps(
			step(0, check("u", longest, q-1), check("u", huge, q-1), check("u", big, q-1)).want(true, true, true),
			step(sec, check("u", longest, 2), check("u", huge, 2), check("u", big, 2)).want(false, false, false),
			step(0, check("u", longest, 2), check("u", huge, 2), check("u", big, 2)).refunding(0, 1<<39, 1<<39, 1<<39).want(true, true, true),
			step(0, check("u", longest, 1<<39), check("u", huge, 1<<39), check("u", big, 1<<39)).want(false, false, false),
			step(0, check("u", longest, 1<<39-1), check("u", huge, 1<<39-1), check("u", big, 1<<39-1)).want(true, true, true),
			step(sec, check("u", huge, q)).refunding(2).want(false), // huge's previous window weighs in
			step(sluice.MaxWindow/3, check("u", huge, 1<<38)).refunding(4, 1, 1<<39, 1),
			step(0, check("u", huge, 0), check("u", big, 0), check("u", longest, 0)).refunding(6, q),
		)},
	}
}
