package sim

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sluice-dev/sluice"
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
	// Store is "memory" or "redis"; RedisMode the Redis deployment.
	Store     string `json:"store"`
	RedisMode string `json:"redis_mode,omitempty"`
	// PerInstance is true when several instances each keep their own
	// memory store, so the configured Quantity (and Burst) are the
	// requirement's divided by the number of instances.
	PerInstance bool `json:"per_instance,omitempty"`
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
// given Requirements.Seed.
func Design(ctx context.Context, req Requirements) (*Analysis, error) {
	req, err := req.withDefaults()
	if err != nil {
		return nil, err
	}
	q, w, _ := ParseRate(req.Rate)
	rec, err := recommend(req, q, w)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Requirements: req, Recommendation: rec, Scale: simScale(req, q)}
	if err := a.simulate(ctx, q, w); err != nil {
		return nil, err
	}
	a.Config = configYAML(req, rec)
	a.Markdown = a.markdown(q, w)
	return a, nil
}

// smoothing reports whether the requirement caps bursts below the quantity.
func smoothing(req Requirements, q int64) bool { return req.Burst > 0 && req.Burst < q }

// recommend chooses the algorithm, its parameters and the store.
func recommend(req Requirements, q int64, w time.Duration) (Recommendation, error) {
	rec := Recommendation{Quantity: q, Window: Duration(w)}
	logBytes := float64(req.Keys) * float64(q) * 16
	// The exact log is chosen while it stays small: strict precision
	// tolerates more memory for it than approximate precision.
	logFits := q <= 10_000 && logBytes <= 1<<30
	if req.Precision == PrecisionApproximate {
		logFits = q <= 1_000 && logBytes <= 256<<20
	}
	switch {
	case smoothing(req, q) && req.Precision != PrecisionLoose:
		// A bucket of B refilled at (Q-B)/W admits at most B + (Q-B) = Q in
		// any window, with bursts of at most B.
		rec.Algorithm, rec.Quantity, rec.Burst = "gcra", q-req.Burst, req.Burst
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"Bursts must stay within %d and no window of %s may admit more than %d: a GCRA bucket of %d refilled at %d per %s admits at most %d + %d = %d in any window.",
			req.Burst, FormatDuration(w), q, req.Burst, q-req.Burst, FormatDuration(w), req.Burst, q-req.Burst, q))
	case smoothing(req, q):
		rec.Algorithm, rec.Burst = "gcra", req.Burst
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"Bursts must stay within %d and loose precision accepts up to burst + quantity in one window: GCRA (a token bucket kept as one timestamp) admits %d at once and then spaces requests %s apart on average.",
			req.Burst, req.Burst, FormatDuration(w/time.Duration(q))))
	case req.Precision != PrecisionLoose && logFits:
		rec.Algorithm = "sliding-window-log"
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"No window of %s may admit more than %d, whatever the timing: only the sliding window log is exact, and at %d per key it fits in memory (at most %s for %d keys).",
			FormatDuration(w), q, q, formatBytes(logBytes), req.Keys))
	case req.Precision != PrecisionLoose:
		// The burst is the headroom of the split: strict keeps half the
		// quantity for bursts, approximate a tenth (a sustained rate of
		// 90% of the quantity). Either way B + (Q-B) = Q bounds every window.
		part := max(q/2, 1)
		if req.Precision == PrecisionApproximate {
			part = max(q/10, 1)
		}
		if part = max(part, req.minCapacity); part >= q && q > 1 {
			return rec, fmt.Errorf("a request may cost %d, too much for a bucket that keeps every window of %s within %d: raise the quantity or lower the cost", req.minCapacity, FormatDuration(w), q)
		}
		rec.Algorithm, rec.Quantity, rec.Burst = "gcra", q-part, part
		if q == 1 {
			rec.Quantity, rec.Burst = 1, 1
		}
		rec.Reasons = append(rec.Reasons, fmt.Sprintf(
			"No window of %s may admit more than %d, but an exact log of %d entries per key for %d keys (up to %s) is too large: a GCRA bucket of %d refilled at %d per %s never admits more than %d in any window, in 16 bytes per key.",
			FormatDuration(w), q, q, req.Keys, formatBytes(logBytes), rec.Burst, rec.Quantity, FormatDuration(w), rec.Quantity+rec.Burst))
	default:
		rec.Algorithm = "fixed-window"
		rec.Reasons = append(rec.Reasons,
			"Loose precision: the fixed window is the simplest limit to explain (the quota resets at the top of each window) and the cheapest to keep, 16 bytes per key; you accept up to twice the quantity across a boundary.")
	}
	alg, err := sluice.ParseAlgorithm(rec.Algorithm)
	if err != nil {
		return rec, err
	}
	l, err := LimitFor(alg, rec.Quantity, w, rec.Burst, 0)
	if err != nil {
		return rec, fmt.Errorf("requirements %s: %w", req.Rate, err)
	}
	rec.Name = l.Name()
	if req.Name != "" {
		if l = l.Named(req.Name); l.Err() != nil {
			return rec, fmt.Errorf("requirements: name: %w", l.Err())
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
	case req.Instances > 1: // memory on several instances: divide the quota
		rec.PerInstance = true
		rec.Quantity = max(rec.Quantity/int64(req.Instances), 1)
		if rec.Burst > 0 {
			rec.Burst = max(rec.Burst/int64(req.Instances), 1)
		}
	}
	rec.Label = "recommended"
	return rec, nil
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
		per = 16*float64(rec.Quantity) + keyOverhead
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

// simScale sizes the simulations to at most req.budget() arrivals each.
func simScale(req Requirements, q int64) SimScale {
	budget := req.budget()
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
	s.Factor = float64(q) / float64(s.Quantity)
	if smoothing(req, q) {
		s.Burst = max(int64(math.Round(float64(req.Burst)/s.Factor)), 1)
	}
	return s
}

// simulate runs the four scenarios.
func (a *Analysis) simulate(ctx context.Context, q int64, w time.Duration) error {
	s, rec := a.Scale, a.Recommendation
	cs, err := Contenders(sluice.Algorithms(), s.Quantity, w, s.Burst, w/10)
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
			rb *= int64(a.Requirements.Instances)
		}
		rb = max(int64(math.Round(float64(rb)/s.Factor)), 1)
		rq = max(s.Quantity-rb, 1)
	}
	recLimit, err := LimitFor(alg, rq, w, rb, 0)
	if err != nil {
		return fmt.Errorf("simulating the recommendation: %w", err)
	}
	a.Recommendation.Label = alg.String()
	same := false
	for _, c := range cs {
		same = same || c.Limit.String() == recLimit.String()
	}
	if !same {
		a.Recommendation.Label = fmt.Sprintf("recommended: %s %s", alg, FormatRate(rq, w))
		if alg != sluice.AlgorithmFixedWindow && alg != sluice.AlgorithmSlidingLog && alg != sluice.AlgorithmSlidingCounter {
			a.Recommendation.Label += fmt.Sprintf(" burst %d", rb)
		}
		cs = append([]Contender{{Label: a.Recommendation.Label, Limit: recLimit}}, cs...)
	}
	scenarios := []struct {
		p    Pattern
		desc string
	}{
		{Pattern{Name: PatternBoundaryBurst}, "a full window's quantity just before a window boundary and again just after it, every other window (1 key)"},
		{Pattern{Name: PatternSpike}, "steady traffic 20% over the limit with a ten-fold spike lasting one window (1 key)"},
		{Pattern{Name: PatternSteady}, "Poisson traffic 20% over the limit (1 key)"},
		{Pattern{Name: PatternManyKeys, Keys: s.Keys}, fmt.Sprintf("%d keys at half the limit on average, popularity Zipf-skewed (s = 1.1): a few hot keys far over the limit, most under it", s.Keys)},
	}
	for _, sc := range scenarios {
		sc.p.Seed = a.Requirements.Seed
		tr, err := Generate(sc.p, s.Quantity, w, int(2*a.Requirements.budget()))
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.p.Name, err)
		}
		res, err := Run(ctx, tr, Config{Quantity: s.Quantity, Window: w, Contenders: cs, Seed: a.Requirements.Seed})
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.p.Name, err)
		}
		res.Chart = nil
		a.Scenarios = append(a.Scenarios, Scenario{Pattern: sc.p.Name, Description: sc.desc, Result: res})
	}
	return nil
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

// worst returns label's largest worst window over all scenarios.
func (a *Analysis) worst(label string) (units int64, pattern string) {
	for _, sc := range a.Scenarios {
		if f := a.figure(sc.Pattern, label); f != nil && f.WorstWindow > units {
			units, pattern = f.WorstWindow, sc.Pattern
		}
	}
	return units, pattern
}
