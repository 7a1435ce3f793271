package sim

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/calendartext"
)

// Analysis is what Design returns: the recommendation, the simulations
// that justify it, and the two documents a person takes away.
type Analysis struct {
	// Requirements are the input with defaults applied.
	Requirements Requirements `json:"requirements"`
	// Recommendation is the limit and store to use.
	Recommendation Recommendation `json:"recommendation"`
	// Scale describes how the simulations were sized: the quantity and keys
	// they used, when smaller than the requirement's.
	Scale SimScale `json:"scale"`
	// Scenarios are the simulations behind the figures.
	Scenarios []Scenario `json:"scenarios"`
	// Markdown is the analysis for a person: context, recommendation with
	// the simulated figures, trade-offs, next steps, and the config.
	Markdown string `json:"markdown"`
	// Config is a ready sluice configuration file (YAML).
	Config string `json:"config"`
}

// Recommendation is the chosen limit and store.
type Recommendation struct {
	// Name, Algorithm, Quantity, Window, Burst and MaxWait are the limit as
	// the config writes it (Burst and MaxWait 0 when not set).
	Name      string   `json:"name"`
	Algorithm string   `json:"algorithm"`
	Quantity  int64    `json:"quantity"`
	Window    Duration `json:"window"`
	Burst     int64    `json:"burst,omitempty"`
	MaxWait   Duration `json:"max_wait,omitempty"`
	// Period is a calendar window's period ("month"), which the config
	// writes as its window; Window is then the period's longest. Zone and
	// Starts are the requirement's, written beside it. Empty otherwise.
	Period string `json:"period,omitempty"`
	Zone   string `json:"zone,omitempty"`
	Starts Starts `json:"starts,omitempty"`
	// Store is "memory" or "redis"; RedisMode the Redis deployment.
	Store     string `json:"store"`
	RedisMode string `json:"redis_mode,omitempty"`
	// PerInstance is true when several instances each keep their own
	// memory store, so the configured Quantity (and Burst) are the
	// requirement's divided by the number of instances.
	PerInstance bool `json:"per_instance,omitempty"`
	// sharedQuantity and sharedBurst are the limit of one store shared by
	// every instance, what the simulations replay: Quantity and Burst
	// before the division between instances.
	sharedQuantity, sharedBurst int64
	// Reasons say why, in sentences; Label is the row of the recommended
	// limit in every scenario's result.
	Reasons []string `json:"reasons"`
	Label   string   `json:"label"`
}

// SimScale records how the simulations were sized.
type SimScale struct {
	// Quantity, Burst and Keys are what the simulations used; Factor is
	// requirement quantity / simulated quantity (1 when not scaled).
	Quantity int64   `json:"quantity"`
	Burst    int64   `json:"burst,omitempty"`
	Keys     int     `json:"keys"`
	Factor   float64 `json:"factor"`
}

// Scenario is one simulation of the analysis.
type Scenario struct {
	Pattern     string  `json:"pattern"`
	Description string  `json:"description"`
	Result      *Result `json:"result"`
}

// Simulation budget of Design: the most arrivals one scenario may have by
// default, and the largest quantity simulated (the sliding log's decision
// time grows with it).
const (
	scenarioBudget   = 300_000
	scenarioQuantity = 1_000
)

// Design turns requirements into a recommendation, justified by simulating
// every algorithm (and the recommended limit) on four traffic patterns —
// boundary bursts, a spike, steady overload and a skewed key population —
// and writes the analysis and a config file. It is deterministic for a
// given Requirements.Seed. A refused value read by ReadRequirements, and
// not changed since, is reported at its file:line:col.
func Design(ctx context.Context, req Requirements) (*Analysis, error) {
	a, err := designLimitOf(ctx, req)
	return a, req.src.locate(req, err)
}

func designLimitOf(ctx context.Context, req Requirements) (*Analysis, error) {
	req, err := req.withDefaults()
	if err != nil {
		return nil, err
	}
	rt := req.rate()
	rec, err := recommend(req, rt)
	if err != nil {
		return nil, fmt.Errorf("requirements: %w", err)
	}
	a := &Analysis{Requirements: req, Recommendation: rec, Scale: simScale(req, rt)}
	if err := a.simulate(ctx, rt); err != nil {
		return nil, err
	}
	a.Config = configYAML(req, rec)
	a.Markdown = a.markdown(rt)
	return a, nil
}

// rate returns the rate of rec: its quantity per window or per calendar
// period.
func (rec Recommendation) rate() rate {
	if rec.Period == "" {
		return rate{q: rec.Quantity, w: rec.Window.D()}
	}
	rt, _ := calendarOf(fmt.Sprintf("%d/%s", rec.Quantity, rec.Period), rec.Zone, rec.Starts)
	return rt
}

// limit returns the sluice.Limit rec configures (before its name).
func (rec Recommendation) limit() (sluice.Limit, error) {
	alg, err := sluice.ParseAlgorithm(rec.Algorithm)
	if err != nil {
		return sluice.Limit{}, err
	}
	return rec.rate().limit(alg, rec.Burst, rec.MaxWait.D())
}

// periodStartText says when rt's calendar periods start: "from 00:00 UTC
// on the 1st", "from 00:00 UTC+09:00 on Sunday".
func periodStartText(rt rate) string {
	zone := "UTC"
	if rt.zone != "" && rt.zone != "UTC" && rt.zone != "Z" {
		zone = "UTC" + rt.zone
	}
	on := ""
	switch rt.period {
	case sluice.Week:
		on = " on Monday"
		if rt.starts != "" {
			d := strings.ToLower(string(rt.starts))
			on = " on " + strings.ToUpper(d[:1]) + d[1:]
		}
	case sluice.Month:
		on = " on the 1st"
		if n, err := strconv.Atoi(string(rt.starts)); err == nil {
			on = " on the " + calendartext.Ordinal(n)
		}
	case sluice.Year:
		on = " on January 1"
	}
	return "from 00:00 " + zone + on
}

// periodLengthText is how a period's length varies: " (28 to 31 days)".
func periodLengthText(p sluice.Period) string {
	switch p {
	case sluice.Month:
		return ", however long the month (28 to 31 days)"
	case sluice.Year:
		return ", however long the year (365 or 366 days)"
	}
	return ""
}

// smoothing reports whether the requirement caps bursts below the quantity.
func smoothing(req Requirements, q int64) bool { return req.Burst > 0 && req.Burst < q }

// recommend chooses the algorithm, its parameters and the store.
func recommend(req Requirements, rt rate) (Recommendation, error) {
	q, w := rt.q, rt.w
	rec := Recommendation{Quantity: q, Window: Duration(w)}
	logBytes := stateEstimate(Recommendation{Algorithm: "sliding-window-log", Quantity: q}, req)
	// The exact log is chosen while it stays small: strict precision
	// tolerates more memory for it than approximate precision.
	maxEntries, maxBytes := int64(10_000), float64(1<<30)
	if req.Precision == PrecisionApproximate {
		maxEntries, maxBytes = 1_000, 256<<20
	}
	logFits := q <= maxEntries && logBytes <= maxBytes
	switch {
	case rt.calendar():
		// Whatever the precision: the quota is stated per calendar period,
		// and only a fixed window is whole again at a period's start.
		rec.Algorithm, rec.Period, rec.Zone, rec.Starts = "fixed-window", rt.period.String(), rt.zone, rt.starts
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"%d per %v is a billing quota: it is counted per calendar %v, %s, and is whole again when the next %v starts%s. "+
				"The calendar fixed window (window: %v) counts exactly that, never more than %d in one %v, in 16 bytes per key; "+
				"a sliding window of %s would never be whole again at the %v's start, and its exact log would keep up to %s per key.",
			q, rt.period, rt.period, periodStartText(rt), rt.period, periodLengthText(rt.period), rt.period, q, rt.period, rt.span(), rt.period, plural(q, "entry")))
	case smoothing(req, q) && req.Precision != PrecisionLoose:
		rec.Algorithm, rec.Quantity, rec.Burst = "gcra", splitRate(q, req.Burst), req.Burst
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"Bursts must stay within %d and no window of %s may admit more than %d: a GCRA bucket of %d refilled at %d per %s admits at most %d + %d − 1 = %d in any window (its first admission and its last are less than a window apart, and fewer than %d refill between them).",
			req.Burst, FormatDuration(w), q, req.Burst, rec.Quantity, FormatDuration(w), req.Burst, rec.Quantity, bucketWorst(rec.Quantity, req.Burst), rec.Quantity))
	case smoothing(req, q):
		rec.Algorithm, rec.Burst = "gcra", req.Burst
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"Bursts must stay within %d and loose precision accepts up to burst + quantity in one window: GCRA (a token bucket kept as one timestamp) admits %d at once and then spaces requests %s apart on average.",
			req.Burst, req.Burst, FormatDuration(w/time.Duration(q))))
	case req.Precision != PrecisionLoose && logFits:
		rec.Algorithm = "sliding-window-log"
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"No window of %s may admit more than %d, whatever the timing: only the sliding window log is exact, and at %d per key it fits in memory (at most %s for %s).",
			FormatDuration(w), q, q, formatBytes(logBytes), plural(req.Keys, "key")))
	case req.Precision != PrecisionLoose:
		// The burst is the headroom of the split: strict keeps half the
		// quantity for bursts, approximate a tenth (a sustained rate of
		// about 90% of the quantity). Either way the rate is splitRate's,
		// and no window sees more than the quantity.
		part := max(q/2, 1)
		if req.Precision == PrecisionApproximate {
			part = max(q/10, 1)
		}
		if part = max(part, req.minCapacity); part > q {
			return rec, fieldErrorf("rate", "a request may cost %d, too much for a bucket that keeps every window of %s within %d: raise the quantity or lower the cost", req.minCapacity, FormatDuration(w), q)
		}
		rec.Algorithm, rec.Quantity, rec.Burst = "gcra", splitRate(q, part), part
		logTooBig := fmt.Sprintf("an exact log would keep %s per key, more than the %d %s precision keeps in one key's log",
			plural(q, "entry"), maxEntries, req.Precision)
		if q <= maxEntries {
			logTooBig = fmt.Sprintf("an exact log of %s per key for %s would take up to %s, more than the %s %s precision gives the logs of every key",
				plural(q, "entry"), plural(req.Keys, "key"), formatBytes(logBytes), formatBytes(maxBytes), req.Precision)
		}
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"No window of %s may admit more than %d, but %s: a GCRA bucket of %d refilled at %d per %s never admits more than %d in any window, in 16 bytes per key.",
			FormatDuration(w), q, logTooBig, rec.Burst, rec.Quantity, FormatDuration(w), bucketWorst(rec.Quantity, rec.Burst)))
	default:
		rec.Algorithm = "fixed-window"
		rec.Reasons = append(rec.Reasons,
			"Loose precision: the fixed window is the simplest limit to explain (the quota resets at the top of each window) and the cheapest to keep, 16 bytes per key; you accept up to twice the quantity across a boundary.")
	}
	if rec.Algorithm == "gcra" && req.Precision != PrecisionLoose {
		if err := rec.exactRate("The bucket's quantity"); err != nil {
			return rec, fieldErrorf("rate", "%s: %w", req.Rate, err)
		}
	}
	l, err := rec.limit()
	if err != nil {
		return rec, fieldErrorf("rate", "%s: %w", req.Rate, err)
	}
	rec.Name = l.Name()
	if req.Name != "" {
		if l = l.Named(req.Name); l.Err() != nil {
			return rec, &fieldError{path: "name", err: l.Err()}
		}
		rec.Name = req.Name
	}

	rec.Store = req.Store
	if rec.Store == "auto" {
		rec.Store = "memory"
		if req.Instances > 1 || stateEstimate(rec, req) > memoryBudget {
			rec.Store = "redis"
		}
	}
	switch {
	case rec.Store == "redis":
		rec.RedisMode = req.RedisMode
		if rec.RedisMode == "" {
			rec.RedisMode = "standalone"
			if stateEstimate(rec, req) > redisBudget {
				rec.RedisMode = "cluster"
			}
		}
		if err := oneServer(rec.RedisMode, req.RedisAddresses); err != nil {
			return rec, err
		}
	case req.Instances > 1: // memory on several instances: divide the quota
		if err := rec.divide(req, q, w); err != nil {
			return rec, err
		}
	}
	if rec.Store == "memory" {
		if err := memoryHolds(needOf(req.Keys, rec)); err != nil {
			return rec, err
		}
	}
	rec.Label = "recommended"
	return rec, nil
}

// divide makes rec one instance's share of requirement q per w when each of
// req.Instances keeps its own count: the instances' shares together never
// admit more in a window than rec does alone (q, or for loose precision
// the bucket's quantity plus its burst), and each share still holds the
// costliest request (req.minCapacity). A requirement too small to share
// that way is an error that names the shared store which holds it.
func (rec *Recommendation) divide(req Requirements, q int64, w time.Duration) error {
	n, need := int64(req.Instances), max(req.minCapacity, 1)
	split := rec.Burst > 0 && req.Precision != PrecisionLoose
	whole := rec.Quantity
	if split {
		whole = q // a split bucket: bucketWorst bounds every window
	}
	quantity, burst := rec.Quantity/n, int64(0)
	if rec.Burst > 0 {
		burst = max(rec.Burst/n, need)
	}
	if split {
		quantity = min(quantity, splitRate(whole/n, burst))
	}
	least := need // the smallest share that admits anything
	if rec.Burst > 0 && !split {
		least = need + 1 // a burst of the costliest request and a rate of 1
	}
	if quantity < 1 || (rec.Burst == 0 && quantity < need) {
		return fieldErrorf("instances", "%d per %s cannot be divided between %d instances that each keep their own count in memory: each would need at least %d, %d in all; use store: redis (or auto), which keeps one count for every instance",
			whole, FormatDuration(w), n, least, n*least)
	}
	rec.sharedQuantity, rec.sharedBurst = rec.Quantity, rec.Burst
	rec.PerInstance, rec.Quantity, rec.Burst = true, quantity, burst
	if err := rec.exactRate("Each instance's quantity"); err != nil {
		return fieldErrorf("instances", "%d per %s cannot be divided between %d instances that each keep their own count in memory: %v; use store: redis (or auto), which keeps one count for every instance",
			rec.sharedQuantity, FormatDuration(w), n, err)
	}
	if s := rec.burstAcross(req); s != "" {
		rec.Reasons = append(rec.Reasons, s)
	}
	return nil
}

// splitRate is the rate per window of a bucket of burst that admits at most
// q in any window, and the most that does: q − burst + 1 (see bucketWorst).
// It is at least 1 for a burst of at most q.
func splitRate(q, burst int64) int64 { return q - burst + 1 }

// bucketWorst is the most a bucket of burst refilled at rate per window W
// admits in any span (t−W, t]: burst + rate − 1. Less than W passes between
// the first admission in the span and the last, in which less than rate
// refill, and admissions are whole; a client that takes the burst at once
// and then each unit as it refills reaches it.
func bucketWorst(rate, burst int64) int64 { return burst + rate - 1 }

// maxRateRounding bounds how far exactRate lowers a bucket's quantity.
const maxRateRounding = 1024

// exactRate lowers the quantity of rec, a bucket whose rate the designer
// chose (a split of the stated quantity, or an instance's share of it), to
// the largest at most maxRateRounding below it that the bucket can keep
// exact (a rate of Q per W whose burst × W/gcd(W, Q) fits the algorithms'
// ticks), saying so in its reasons with whose ("Each instance's quantity"),
// or returns why none can. A rate that is exact as chosen is left as it is.
func (rec *Recommendation) exactRate(whose string) error {
	_, err := rec.limit()
	if err == nil {
		return nil
	}
	chosen := rec.Quantity
	for q := chosen - 1; q >= 1 && q >= chosen-maxRateRounding; q-- {
		rec.Quantity = q
		if _, err := rec.limit(); err == nil {
			rec.Reasons = append(rec.Reasons, fmt.Sprintf(
				"%s is %d, not %d: a bucket refilled at %d per %s could not be kept exact in integer time; %d can.",
				whose, q, chosen, chosen, FormatDuration(rec.Window.D()), q))
			return nil
		}
	}
	rec.Quantity = chosen
	return err
}

// burstAcross says, of a bucket divided between instances, that their
// buckets together take more at once than the stated burst (each holds at
// least the costliest request), or returns "" when they do not.
func (rec Recommendation) burstAcross(req Requirements) string {
	n := int64(req.Instances)
	if !rec.PerInstance || req.Burst <= 0 || rec.Burst*n <= req.Burst {
		return ""
	}
	return fmt.Sprintf("%s divided between %d instances gives each a bucket of %d (none may hold less than the costliest request): a client whose requests are spread over all of them may send %d at once, above the stated burst of %d; a Redis store (store: redis) keeps one bucket for every instance.",
		req.Rate, n, rec.Burst, rec.Burst*n, req.Burst)
}

// Sizing of stores: the bookkeeping a store adds to each key's state
// (its name, a map entry or a Redis key), the most state Design puts in one
// process's memory, and the most in one Redis server.
const (
	keyOverhead  = 100
	memoryBudget = 8 << 30
	redisBudget  = 25 << 30
)

// stateEstimate is the memory the recommended limit needs for all keys at
// most, in bytes, including the store's per-key bookkeeping.
func stateEstimate(rec Recommendation, req Requirements) float64 {
	per := 16.0 + keyOverhead
	switch rec.Algorithm {
	case "sliding-window-counter":
		per = 24 + keyOverhead
	case "sliding-window-log":
		// An entry per admission in the window, Quantity at the limit: 16
		// bytes each in an array the memory store keeps at up to twice
		// the entries, beside a state of about twice a counter's
		// bookkeeping; Redis's sorted set holds about 30 bytes an entry.
		per = 32*float64(rec.Quantity) + 2*keyOverhead
	}
	return per * float64(req.Keys)
}

// budget returns the most arrivals one scenario may have.
func (r Requirements) budget() int64 {
	if r.MaxArrivals > 0 {
		return int64(r.MaxArrivals)
	}
	return scenarioBudget
}

// simScale sizes the simulations of rt to at most req.budget() arrivals
// each.
func simScale(req Requirements, rt rate) SimScale {
	q, budget := rt.q, req.budget()
	s := SimScale{Quantity: q, Keys: int(min(req.Keys, 1000)), Factor: 1}
	// The spike scenario sends about 23 windows' worth; many-keys 5·Q per key.
	s.Quantity = min(s.Quantity, scenarioQuantity, max(budget/23, 1))
	if 5*s.Quantity*int64(s.Keys) > budget {
		s.Keys = int(max(budget/(5*s.Quantity), 1))
		if s.Keys < 50 {
			s.Keys = int(min(req.Keys, 50))
			s.Quantity = max(budget/(5*int64(s.Keys)), 1)
		}
	}
	if rt.calendar() {
		if _, err := rt.withQuantity(s.Quantity).contenders(sluice.Algorithms(), 0, rt.w/10); err != nil {
			s.Quantity = evenQuantity(s.Quantity) // the buckets cannot keep s.Quantity per 366 days exact
		}
	}
	s.Factor = float64(q) / float64(s.Quantity)
	if smoothing(req, q) {
		s.Burst = max(int64(math.Round(float64(req.Burst)/s.Factor)), 1)
	}
	return s
}

// evenQuantity returns the largest quantity ≤ n whose only prime factors
// are 2, 3 (at most 3^4) and 5: it divides a calendar period's longest (a
// leap year is 2^14·3^4·5^8·61 µs) evenly, so that every bucket algorithm
// can keep that quantity per period exact (see sluice.NewLimit), which
// some quantities up to scenarioQuantity per 366 days are not.
func evenQuantity(n int64) int64 {
	best := int64(1)
	for p2 := int64(1); p2 <= n; p2 *= 2 {
		for p3, i := p2, 0; p3 <= n && i <= 4; p3, i = p3*3, i+1 {
			for p5 := p3; p5 <= n; p5 *= 5 {
				best = max(best, p5)
			}
		}
	}
	return best
}

// simulate runs the four scenarios of rt at the analysis's scale.
func (a *Analysis) simulate(ctx context.Context, rt rate) error {
	s, rec, w := a.Scale, a.Recommendation, rt.w
	sim := rt.withQuantity(s.Quantity)
	cs, err := sim.contenders(sluice.Algorithms(), s.Burst, w/10)
	if err != nil {
		return err
	}
	// The recommended limit, at simulation scale and before any division
	// between instances (the simulation is of one shared store).
	alg, _ := sluice.ParseAlgorithm(rec.Algorithm)
	rq, rb := s.Quantity, s.Burst
	if rec.Algorithm == "gcra" && a.Requirements.Precision != PrecisionLoose {
		rb = rec.Burst
		if rec.PerInstance {
			rb = rec.sharedBurst
		}
		rb = max(int64(math.Round(float64(rb)/s.Factor)), 1)
		rq = splitRate(s.Quantity, rb)
	}
	recLimit, err := sim.withQuantity(rq).limit(alg, rb, 0)
	if err != nil {
		return fmt.Errorf("simulating the recommendation: %w", err)
	}
	a.Recommendation.Label = ""
	for _, c := range cs {
		if c.Limit.String() == recLimit.String() {
			a.Recommendation.Label = c.label()
		}
	}
	if a.Recommendation.Label == "" {
		a.Recommendation.Label = fmt.Sprintf("recommended: %s %s", alg, FormatRate(rq, w))
		if alg != sluice.AlgorithmFixedWindow && alg != sluice.AlgorithmSlidingLog && alg != sluice.AlgorithmSlidingCounter {
			a.Recommendation.Label += fmt.Sprintf(" burst %d", rb)
		}
		cs = append([]Contender{{Label: a.Recommendation.Label, Limit: recLimit}}, cs...)
	}
	for _, sc := range scenarios(rt, s.Keys) {
		sc.Seed = a.Requirements.Seed
		tr, err := generateFor(ctx, sc.Pattern, sim, int(2*a.Requirements.budget()))
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		res, err := Run(ctx, tr, Config{Quantity: s.Quantity, Window: w, Period: rt.period, Offset: rt.offset, Contenders: cs, Seed: a.Requirements.Seed})
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		res.Chart = nil
		a.Scenarios = append(a.Scenarios, Scenario{Pattern: sc.Name, Description: sc.desc, Result: res})
	}
	return nil
}

// overText says how far 1.2 times calendar quota rt per its longest
// period is over the quota of its shortest and longest periods: "8% to
// 20%" for a month (28 to 31 days), "20%" for a week.
func overText(rt rate) string {
	shortest := map[sluice.Period]float64{sluice.Day: 1, sluice.Week: 7, sluice.Month: 28, sluice.Year: 365}[rt.period]
	lo := math.Round(100 * (1.2*shortest*float64(24*time.Hour)/float64(rt.w) - 1))
	if lo == 20 {
		return "20%"
	}
	return fmt.Sprintf("%.0f%% to 20%%", lo)
}

// scenario is a pattern of Design's and its description.
type scenario struct {
	Pattern
	desc string
}

// scenarios are Design's four patterns for rt, keys keys in many-keys. A
// calendar quota's are those of its longest period (31 days for a month:
// 310 days of traffic), its boundary bursts at the starts of periods.
func scenarios(rt rate, keys int) []scenario {
	if rt.calendar() {
		p, span := rt.period, rt.span()
		return []scenario{
			{Pattern{Name: PatternBoundaryBurst}, fmt.Sprintf("a whole %v's quota in the %s before a %v starts and again in the %s after it, every other %v (1 key)",
				p, FormatDuration(rt.w/100), p, FormatDuration(rt.w/100), p)},
			{Pattern{Name: PatternSpike}, fmt.Sprintf("Poisson traffic at 1.2 times the quota per %s, ten-fold for %s (1 key)", span, span)},
			{Pattern{Name: PatternSteady}, fmt.Sprintf("Poisson traffic at 1.2 times the quota per %s, %s over the quota of each %v (1 key)", span, overText(rt), p)},
			{Pattern{Name: PatternManyKeys, Keys: keys}, fmt.Sprintf("%s at half the quota per %s on average, popularity Zipf-skewed (s = 1.1): a few hot keys far over the quota, most under it", plural(keys, "key"), span)},
		}
	}
	return []scenario{
		{Pattern{Name: PatternBoundaryBurst}, "a full window's quantity just before a window boundary and again just after it, every other window (1 key)"},
		{Pattern{Name: PatternSpike}, "steady traffic 20% over the limit with a ten-fold spike lasting one window (1 key)"},
		{Pattern{Name: PatternSteady}, "Poisson traffic 20% over the limit (1 key)"},
		{Pattern{Name: PatternManyKeys, Keys: keys}, fmt.Sprintf("%s at half the limit on average, popularity Zipf-skewed (s = 1.1): a few hot keys far over the limit, most under it", plural(keys, "key"))},
	}
}

// figure returns the result of label in the scenario of pattern.
func (a *Analysis) figure(pattern, label string) *AlgorithmResult {
	for _, sc := range a.Scenarios {
		if sc.Pattern != pattern {
			continue
		}
		for i := range sc.Result.Algorithms {
			if sc.Result.Algorithms[i].Label == label {
				return &sc.Result.Algorithms[i]
			}
		}
	}
	return nil
}

// worstPeriod returns label's largest worst calendar period over all
// scenarios (0 unless the requirement is a calendar quota).
func (a *Analysis) worstPeriod(label string) (units int64, pattern string) {
	for _, sc := range a.Scenarios {
		if f := a.figure(sc.Pattern, label); f != nil && f.WorstPeriod > units {
			units, pattern = f.WorstPeriod, sc.Pattern
		}
	}
	return units, pattern
}

// worst returns label's largest worst window over all scenarios.
func (a *Analysis) worst(label string) (units int64, pattern string) {
	for _, sc := range a.Scenarios {
		if f := a.figure(sc.Pattern, label); f != nil && f.WorstWindow > units {
			units, pattern = f.WorstWindow, sc.Pattern
		}
	}
	return units, pattern
}
