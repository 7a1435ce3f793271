package sim

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/calendartext"
)

// Config says what Run measures: every contender is replayed on the trace
// and held to Quantity per Window (the worst-window figures, and the
// reference decisions, use them).
type Config struct {
	// Quantity and Window are the requirement, Q per W: the figure each
	// contender's worst window is compared with, and the limit of the exact
	// sliding window log that decisions are compared with.
	Quantity int64
	Window   time.Duration
	// Period, when set, makes the requirement a quota per calendar period
	// (sluice.Calendar) whose periods start Offset after the UTC
	// calendar's (sluice.Limit.WithOffset): Window is then the period's
	// longest (31 days for a month), the reference an exact sliding window
	// log of Quantity per Window, and each contender's WorstPeriod is
	// measured too.
	Period sluice.Period
	Offset time.Duration
	// Contenders are the limits to replay; see Contenders.
	Contenders []Contender
	// Retry makes refused clients retry; the zero value never retries.
	Retry RetryPolicy
	// Seed drives the retry policy's random choices (same seed, same run).
	Seed uint64
	// Workers is the most goroutines the contenders are replayed on: 1
	// replays them one after the other on the caller's goroutine, ≤ 0
	// means GOMAXPROCS. Results do not depend on it.
	Workers int

	// interleaved replays keys interleaved in time order even without
	// retries, which decides the same: tests compare the two orders.
	interleaved bool
}

// Run replays tr through each contender on a virtual clock: for every
// request, in time order, the contender's sluice.Limit.Decide runs on that
// key's sluice.State at the request's time, exactly as a store would run it.
// Contenders run in parallel (up to cfg.Workers), each with its own states,
// so results do not depend on scheduling. Run stops early with ctx's error when
// ctx is done.
func Run(ctx context.Context, tr *Trace, cfg Config) (*Result, error) {
	if err := tr.validate(); err != nil {
		return nil, err
	}
	ref, err := LimitFor(sluice.AlgorithmSlidingLog, cfg.Quantity, cfg.Window, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("reference limit: %w", err)
	}
	if len(cfg.Contenders) == 0 {
		return nil, fmt.Errorf("no algorithms to simulate")
	}
	seen := map[string]bool{}
	for _, c := range cfg.Contenders {
		if err := c.Limit.Err(); err != nil {
			return nil, err
		}
		if seen[c.label()] {
			return nil, fmt.Errorf("two contenders are labelled %q", c.label())
		}
		seen[c.label()] = true
	}
	if err := cfg.Retry.validate(); err != nil {
		return nil, err
	}
	req := rate{q: cfg.Quantity, w: cfg.Window}
	if cfg.Period != 0 {
		if err := sluice.Calendar(cfg.Quantity, cfg.Period).WithOffset(cfg.Offset).Err(); err != nil {
			return nil, fmt.Errorf("requirement: %w", err)
		}
		if req = calendarRate(cfg.Quantity, cfg.Period, cfg.Offset); req.w != cfg.Window {
			return nil, fmt.Errorf("a quota per %v has a window of %v (its longest period), not %v", cfg.Period, req.w, cfg.Window)
		}
	}
	s := &simulation{tr: tr, cfg: cfg, req: req, ref: ref, w: int64(cfg.Window / time.Microsecond)}
	// A queue's admissions proceed up to its MaxWait after they arrive, so
	// the chart's bins run that far past the trace's end: each admission
	// counts in the bin of its own time, never piled into the last one.
	var wait time.Duration
	for _, c := range cfg.Contenders {
		wait = max(wait, c.Limit.MaxWait())
	}
	s.bins = newBinning(tr.Start, tr.End+int64(wait/time.Microsecond), s.w)
	s.retrying = cfg.Retry.Max > 0
	if err := ctx.Err(); err != nil { // before the arrivals are copied
		return nil, err
	}
	if !s.retrying && !cfg.interleaved && len(tr.Arrivals) <= math.MaxInt32 {
		s.byKey, s.byKeyIdx = arrivalsByKey(tr)
	}

	// Without retries every contender sees the same requests, and one run of
	// the reference gives the decisions each is compared with.
	jobs := make([]*job, len(cfg.Contenders))
	var refJob *job
	for i, c := range cfg.Contenders {
		jobs[i] = &job{c: c}
		if !s.retrying && refJob == nil && s.isReference(c.Limit) {
			refJob = jobs[i]
		}
	}
	all := jobs
	if !s.retrying && refJob == nil {
		refJob = &job{c: Contender{Label: "reference", Limit: ref}}
		all = append(all[:len(all):len(all)], refJob)
	}
	if err := s.runAll(ctx, all); err != nil {
		return nil, err
	}
	return s.result(jobs, refJob), nil
}

// simulation is one Run's shared, read-only inputs.
type simulation struct {
	tr       *Trace
	cfg      Config
	req      rate // Quantity per Window, or per Period
	ref      sluice.Limit
	w        int64 // µs
	bins     binning
	retrying bool
	// byKey holds the arrivals key by key, each key's in time order, and
	// byKeyIdx their indexes in the trace; nil with retries, whose keys
	// interact through time.
	byKey    []Arrival
	byKeyIdx []int32
}

// arrivalsByKey returns tr's arrivals grouped by key (in key order), each
// group in time order, and their indexes in tr: a counting sort.
func arrivalsByKey(tr *Trace) ([]Arrival, []int32) {
	start := make([]int32, len(tr.Keys)+1)
	for i := range tr.Arrivals {
		start[tr.Arrivals[i].Key+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	arr, idx := make([]Arrival, len(tr.Arrivals)), make([]int32, len(tr.Arrivals))
	for i := range tr.Arrivals {
		k := tr.Arrivals[i].Key
		arr[start[k]], idx[start[k]] = tr.Arrivals[i], int32(i)
		start[k]++
	}
	return arr, idx
}

// job is one contender's replay and what it measured.
type job struct {
	c        Contender
	res      AlgorithmResult
	allowed  []uint64 // bit i: arrival i admitted (without retries only)
	bins     []int64  // admitted units per chart bin
	attempts []int64  // with retries: units decided per chart bin
	peaks    []int32  // sliding log: most entries each key held
}

func (s *simulation) isReference(l sluice.Limit) bool {
	return l.Algorithm() == sluice.AlgorithmSlidingLog && l.Quantity() == s.cfg.Quantity && l.Window() == s.cfg.Window
}

// runAll runs jobs on up to cfg.Workers goroutines (the sliding logs,
// which cost most per decision, first); the first error wins.
func (s *simulation) runAll(ctx context.Context, jobs []*job) error {
	jobs = slices.Clone(jobs)
	rank := func(j *job) int { // the sliding logs first
		if j.c.Limit.Algorithm() == sluice.AlgorithmSlidingLog {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(jobs, func(a, b *job) int { return rank(a) - rank(b) })
	workers := s.cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		var win windowMax
		for _, j := range jobs {
			if err := s.replay(ctx, j, &win); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *job)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			var win windowMax // reused from job to job
			for j := range next {
				if err := s.replay(ctx, j, &win); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return first
}

// result assembles the report once every job has run.
func (s *simulation) result(jobs []*job, ref *job) *Result {
	tr, q := s.tr, s.cfg.Quantity
	offered := make([]int64, s.bins.n)
	active := make([]bool, len(tr.Keys))
	keys := 0
	for i := range tr.Arrivals {
		a := &tr.Arrivals[i]
		offered[s.bins.index(a.At)] += a.Cost
		if !active[a.Key] {
			active[a.Key] = true
			keys++
		}
	}
	res := &Result{
		Source:    tr.Source,
		Limit:     s.req.String(),
		Quantity:  q,
		Window:    Duration(s.cfg.Window),
		Keys:      keys,
		Requests:  len(tr.Arrivals),
		Units:     tr.Units(),
		Duration:  Duration(tr.Duration()),
		Reference: s.ref.Algorithm().String() + " " + FormatRate(q, s.cfg.Window),
		Chart: &ChartData{
			Span:      Duration(time.Duration(int64(s.bins.k)*s.bins.width) * time.Microsecond),
			Scaled:    s.bins.scale != 1,
			LimitLine: float64(q) * float64(keys),
			Series:    []Series{s.bins.series("requests", RoleOffered, offered)},
		},
	}
	if s.bins.scale != 1 {
		res.Chart.Span = res.Window
	}
	if s.req.calendar() {
		res.Period, res.Offset = s.req.period.String(), Duration(s.req.offset)
		res.WholeAgain = calendartext.WholeAgain(sluice.Calendar(q, s.req.period).WithOffset(s.req.offset))
		res.Reference = fmt.Sprintf("%s %d/%dd", s.ref.Algorithm(), q, s.cfg.Window/(24*time.Hour))
	}
	if s.retrying {
		p := s.cfg.Retry
		res.Retry = &p
	}
	for _, j := range jobs {
		r := j.res
		r.Label, r.Algorithm, r.Limit = j.c.label(), j.c.Limit.Algorithm().String(), j.c.Limit.String()
		if r.WorstWindow > q {
			r.OvershootPct = 100 * float64(r.WorstWindow-q) / float64(q)
		}
		if ref != nil && j != ref {
			for i, a := range j.allowed {
				b := ref.allowed[i]
				r.FalseAllows += int64(bits.OnesCount64(a &^ b))
				r.FalseDenials += int64(bits.OnesCount64(b &^ a))
			}
			r.Disagreements = r.FalseAllows + r.FalseDenials
		}
		if r.Decisions > 0 {
			r.DisagreePct = 100 * float64(r.Disagreements) / float64(r.Decisions)
		}
		r.StateBytesMax, r.StateBytesMean = stateBytes(j.c.Limit.Algorithm()), float64(stateBytes(j.c.Limit.Algorithm()))
		if j.peaks != nil {
			var most, total int64
			for k, p := range j.peaks {
				if active[k] {
					most = max(most, int64(p))
					total += int64(p)
				}
			}
			r.StateBytesMax = 16 * most
			r.StateBytesMean = 16 * float64(total) / float64(max(keys, 1))
		}
		res.Algorithms = append(res.Algorithms, r)
		res.Chart.Series = append(res.Chart.Series, s.bins.series(r.Label, RoleAdmitted, j.bins))
	}
	if s.retrying { // show the storm the worst contender's refusals caused
		most := jobs[0]
		for _, j := range jobs {
			if j.res.Decisions > most.res.Decisions {
				most = j
			}
		}
		name := fmt.Sprintf("requests + retries (%s)", most.c.label())
		at := s.bins.series(name, RoleAttempts, most.attempts)
		res.Chart.Series = append(res.Chart.Series[:1], append([]Series{at}, res.Chart.Series[1:]...)...)
	}
	return res
}
