// Package sim is sluice's designer: it replays traffic through the real
// algorithms and measures what each one does with it, then turns requirements
// into a recommended limit and a ready configuration.
//
// # Model
//
// Traffic is a Trace: arrivals (time, key, cost) in time order, either
// generated from a built-in Pattern (steady, boundary-burst, spike, diurnal,
// retry-storm, many-keys; deterministic for a given seed) or read from a CSV
// file with ReadCSV. Time is integer microseconds since sluice.Epoch, as in
// the algorithms' state; a generated trace starts at 0, which is aligned to
// every window.
//
// Run replays a trace on a virtual clock through sluice.Limit.Decide — the
// same pure function every store runs, not a copy of it — keeping one
// sluice.State per key, and reports per algorithm (AlgorithmResult): what it
// admitted and refused, the most units it admitted for one key in any window
// (t-W, t] against the limit Q, the share of decisions that differ from the
// exact sliding window log (the reference), the delays of a leaky-bucket queue,
// and the bytes of state it keeps per key. A quota per calendar week, month
// or year (a rate such as "10000/month") is replayed through the calendar
// window as the fixed window and through the other algorithms over the
// period's longest; each is then measured per calendar period too
// (AlgorithmResult.WorstPeriod). Chart draws the result as PNG or
// SVG. A RetryPolicy makes refused clients retry (after Retry-After or at
// once), so each algorithm sees the retry traffic its own refusals cause.
//
// Simulate is the one call behind `sluice simulate` and the designer web page:
// a JSON-able Request in, a Result and chart bytes out. It refuses traffic
// above Request.MaxArrivals and a replay whose estimated work is above
// Request.MaxWork before replaying anything (a *TooLargeError), and stops
// soon after its context is done. Design is the one call
// behind `sluice design`: Requirements in, a markdown analysis and a config
// file out.
//
// Everything in this package is deterministic: the same inputs and seed give
// the same figures, charts and files. Functions are safe for concurrent use;
// Run uses up to GOMAXPROCS goroutines.
package sim
