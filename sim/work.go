package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-dev/sluice"
)

// logEntriesPerDecision is how many entries of a log algorithm count as
// the work of one constant-time decision: a sliding window log sums every
// entry in its window on each decision, and summing this many takes less
// time than one decision with its bookkeeping, so the estimate of work
// stays an upper bound.
const logEntriesPerDecision = 64

// DefaultMaxWork is the bound of work `sluice simulate` applies unless told
// otherwise (its -max-work), in decisions (Request.MaxWork): a few minutes
// of one core. Simulate itself applies no default: a Request.MaxWork ≤ 0
// bounds nothing.
const DefaultMaxWork = 1_000_000_000

// A TooLargeError is a simulation refused before any of it ran because it
// is above one of its bounds: Request.MaxArrivals ("requests") or
// Request.MaxWork ("work").
type TooLargeError struct {
	// Bound names the bound exceeded: "requests" or "work".
	Bound string
	// Max is the bound, in requests or in decisions (see Request.MaxWork).
	Max int64
	// Size is what the simulation would take, in the same unit: an
	// expectation for a pattern's requests, an upper estimate for work. 0
	// when it is only known to be above Max (a trace read up to the bound).
	Size int64
	// Hint says what to change in the request.
	Hint string
}

// Error describes the size and the bound, e.g. "about 180000 requests, more
// than the bound of 100000: lower the rate, keys or duration".
func (e *TooLargeError) Error() string {
	unit := "requests"
	if e.Bound == "work" {
		unit = "decisions of work"
	}
	msg := fmt.Sprintf("more than the bound of %d %s", e.Max, unit)
	if e.Size > 0 {
		msg = fmt.Sprintf("about %d %s, more than the bound of %d", e.Size, unit, e.Max)
	}
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

// checkWork returns a *TooLargeError when the upper estimate of Run's work
// on tr under cfg (see estimateWork) is above maxWork; maxWork ≤ 0 bounds
// nothing and costs nothing. It returns ctx's error if ctx is done before
// or after the estimate.
func checkWork(ctx context.Context, tr *Trace, cfg Config, maxWork int64) error {
	if maxWork <= 0 {
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w := estimateWork(tr, cfg)
	if err := ctx.Err(); err != nil {
		return err
	}
	if w > maxWork {
		return &TooLargeError{Bound: "work", Max: maxWork, Size: w,
			Hint: "lower the traffic (rate, keys, duration), the retries or the limit's quantity (a sliding window log sums every entry in its window on each decision)"}
	}
	return nil
}

// estimateWork returns an upper estimate of Run's work on tr under cfg, in
// decisions: each decision counts 1 and a log algorithm's decision (sliding
// window log, concurrency) 1 more per logEntriesPerDecision entries of its
// log. A log holds at most its quantity in entries (each spends ≥ 1 unit)
// and at most the requests of its key in the last window; with retries,
// every request may be decided 1 + Retry.Max times, and each contender that
// is not the reference decides every request with the reference too. It
// saturates at the largest int64 rather than overflow.
func estimateWork(tr *Trace, cfg Config) int64 {
	n := int64(len(tr.Arrivals))
	times := int64(1 + max(cfg.Retry.Max, 0))
	decisions := satMul(n, times)
	ref := refLimit{q: cfg.Quantity, w: cfg.Window}
	logs := map[refLimit]int64{} // summed log lengths, by quantity and window
	entries := func(q int64, w time.Duration) int64 {
		k := refLimit{q, w}
		if v, ok := logs[k]; ok {
			return v
		}
		v := logEntries(tr, q, w, times)
		logs[k] = v
		return v
	}
	// One decision of each request (and of its retries) by l.
	cost := func(l sluice.Limit) int64 {
		if !usesLog(l.Algorithm()) {
			return decisions
		}
		return satAdd(decisions, entries(l.Quantity(), l.Window())/logEntriesPerDecision)
	}
	refCost := func() int64 {
		return satAdd(decisions, entries(ref.q, ref.w)/logEntriesPerDecision)
	}
	var total int64
	hasRef := false
	for _, c := range cfg.Contenders {
		isRef := c.Limit.Algorithm() == sluice.AlgorithmSlidingLog && c.Limit.Quantity() == ref.q && c.Limit.Window() == ref.w
		hasRef = hasRef || isRef
		total = satAdd(total, cost(c.Limit))
		if cfg.Retry.Max > 0 && !isRef { // the reference shadows the contender
			total = satAdd(total, refCost())
		}
	}
	if cfg.Retry.Max == 0 && !hasRef { // the reference runs as a job of its own
		total = satAdd(total, refCost())
	}
	return total
}

// checkPatternWork returns a *TooLargeError when a lower estimate of the
// work of replaying p (defaults applied) under contenders, against the
// reference rate ref, is above maxWork, before p is generated; nil when
// it is not, when maxWork ≤ 0, or when it cannot tell (keys of skewed
// popularity). Simulate checks the work again, exactly, on the traffic.
func checkPatternWork(p *Pattern, contenders []Contender, ref rate, maxWork int64) error {
	if maxWork <= 0 || p.Skew > 1 {
		return nil
	}
	if w := patternWork(p, contenders, ref); w > maxWork {
		return &TooLargeError{Bound: "work", Max: maxWork, Size: w,
			Hint: "lower the traffic (rate, keys, duration) or the limit's quantity (a sliding window log sums every entry in its window on each decision)"}
	}
	return nil
}

// patternWork is a lower estimate of the work (see estimateWork) of a
// pattern of uniform keys: 90% of its expected requests decided once per
// contender (and by the reference), and a log holding, for each, a quarter
// of what a window holds at the pattern's lowest rate (the margins cover
// the Poisson noise, the first window and retries it ignores).
func patternWork(p *Pattern, contenders []Contender, ref rate) int64 {
	rq, rw := ref.q, ref.w
	n := p.expected(ref)
	lowest := 1.0 // the lowest rate multiplier over the pattern
	switch p.Name {
	case PatternSpike, PatternRetryStorm:
		lowest = min(p.SpikeFactor, 1)
	case PatternDiurnal:
		lowest = 1 - p.Amplitude
	}
	perKey := p.Rate * lowest // requests per second of one key, at least
	logCost := func(q int64, w time.Duration) float64 {
		return n * min(float64(q), perKey*w.Seconds()) / 4 / logEntriesPerDecision
	}
	total, hasRef := 0.0, false
	for _, c := range contenders {
		l := c.Limit
		total += 0.9 * n
		if usesLog(l.Algorithm()) {
			total += logCost(l.Quantity(), l.Window())
		}
		hasRef = hasRef || l.Algorithm() == sluice.AlgorithmSlidingLog && l.Quantity() == rq && l.Window() == rw
	}
	if !hasRef {
		total += 0.9*n + logCost(rq, rw)
	}
	return int64(min(total, 1<<62))
}

// refLimit is a log's quantity and window.
type refLimit struct {
	q int64
	w time.Duration
}

// usesLog reports whether a's state is a log of admissions it sums on every
// decision.
func usesLog(a sluice.Algorithm) bool {
	return a == sluice.AlgorithmSlidingLog || a == sluice.AlgorithmConcurrency
}

// logEntries returns, summed over tr's requests, an upper bound of the
// entries a log of q per w holds when it decides each: the requests that
// spend units of the same key in the window (t-w, t] up to and including
// it, times the decisions each may take (times), at most q. It takes O(n +
// keys) time and one int32 per request.
func logEntries(tr *Trace, q int64, w time.Duration, times int64) int64 {
	arr := tr.Arrivals
	wµs := max(int64(w/time.Microsecond), 1)
	// Group the requests by key, each group in time order (a counting sort).
	start := make([]int32, len(tr.Keys)+1)
	for i := range arr {
		start[arr[i].Key+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	next := append([]int32(nil), start[:len(tr.Keys)]...)
	byKey := make([]int32, len(arr))
	for i := range arr {
		k := arr[i].Key
		byKey[next[k]] = int32(i)
		next[k]++
	}
	var total int64
	for k := range len(tr.Keys) {
		group := byKey[start[k]:start[k+1]]
		lo, inside := 0, int64(0) // the oldest request in the window; spending requests in it
		for _, i := range group {
			a := &arr[i]
			if a.Cost > 0 {
				inside++
			}
			for arr[group[lo]].At <= a.At-wµs {
				if arr[group[lo]].Cost > 0 {
					inside--
				}
				lo++
			}
			total = satAdd(total, min(q, satMul(inside, times)))
		}
	}
	return satMul(total, times)
}

// satAdd and satMul are + and × on non-negative int64s, saturating at the
// largest int64.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}
