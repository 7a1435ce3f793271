package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Request is one simulation as a web form or a command line states it; it is
// JSON-able. Exactly one of Pattern and Trace gives the traffic.
type Request struct {
	// Pattern generates the traffic (see Pattern for defaults).
	Pattern *Pattern `json:"pattern,omitempty"`
	// Trace is CSV text in ReadCSV's format; TraceName labels it.
	Trace     string `json:"trace,omitempty"`
	TraceName string `json:"trace_name,omitempty"`
	// TraceReader, when not nil, is read instead of Trace (a command reads
	// a file this way without holding its text).
	TraceReader io.Reader `json:"-"`
	// SkipBadLines skips unreadable trace lines (reported in
	// Response.Skipped) instead of failing on the first one.
	SkipBadLines bool `json:"skip_bad_lines,omitempty"`

	// Limit is the requirement as ParseRate reads it, e.g. "100/1m". A
	// quota per calendar week, month or year ("10000/month") is replayed
	// through the calendar window (sluice.Calendar) as the fixed window, and
	// through the other algorithms over the period's longest (31 days).
	Limit string `json:"limit"`
	// Zone and Starts shift a calendar quota's periods as the
	// configuration's zone and starts do (see Requirements.Zone): Zone is
	// UTC (default) or a fixed offset ("+09:00"), Starts a weekday for a
	// week or a day from 1 to 28 for a month. With a rate per day, Zone
	// makes it the calendar day of that zone. They apply to Reference as to
	// Limit: to a calendar rate and, with a Zone, to a rate per day; to
	// nothing else.
	Zone   string `json:"zone,omitempty"`
	Starts Starts `json:"starts,omitempty"`
	// Reference is the requirement every algorithm is measured against
	// (worst windows, decisions of the exact log) and that a pattern's
	// defaults are derived from, as ParseRate reads it; empty means Limit.
	// Set it to compare limits tuned below a requirement, e.g. a GCRA of
	// 81/1m burst 20 against 100/1m.
	Reference string `json:"reference,omitempty"`
	// Burst is the bucket algorithms' capacity; 0 means the quantity.
	Burst int64 `json:"burst,omitempty"`
	// MaxWait makes the leaky bucket a queue that delays up to MaxWait; nil
	// means a tenth of the window, 0 a meter (deciding as the token bucket).
	MaxWait *Duration `json:"max_wait,omitempty"`
	// Algorithms lists algorithm names (see ParseAlgorithms); empty or "all"
	// means all six but those that cannot hold Limit (a bucket cannot keep
	// 869 per year exact), which Result.Omitted names. A listed algorithm
	// that cannot hold it is an error.
	Algorithms []string `json:"algorithms,omitempty"`
	// Retry overrides the pattern's retry policy (and applies to a trace).
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Seed drives the pattern's and the retries' randomness.
	Seed uint64 `json:"seed,omitempty"`
	// Chart asks for a chart: "png", "svg" or "" for none.
	Chart string `json:"chart,omitempty"`
	// Workers is the most goroutines the replays run on (Config.Workers):
	// 1 runs the whole simulation on the caller's goroutine, ≤ 0 means
	// GOMAXPROCS. It is not read from JSON.
	Workers int `json:"-"`
	// Background runs the whole simulation on one goroutine locked to an OS
	// thread of its own at a lower scheduling priority (on Linux, nice +10
	// from the process's; elsewhere the process's), Workers ignored: a
	// server sets it so that a simulation takes the CPU time its other work
	// leaves rather than a fair share of it. It is not read from JSON.
	Background bool `json:"-"`
	// MaxArrivals bounds the traffic, in requests (≤ 0:
	// DefaultMaxArrivals). A web handler sets it lower; it is not read from
	// JSON.
	MaxArrivals int `json:"-"`
	// MaxWork bounds the replay's work, in decisions: every request is
	// decided once by each algorithm (and by the reference, which a retrying
	// simulation runs beside each algorithm), up to 1 + Retry.Max times with
	// retries, and a sliding window log's decision counts one more per 64
	// entries of its window it sums. Simulate estimates it from the traffic
	// (an upper estimate) before replaying and refuses above the bound. ≤ 0
	// bounds nothing. It is not read from JSON.
	MaxWork int64 `json:"-"`
}

// Response is Simulate's answer.
type Response struct {
	Result *Result
	// Chart is the chart in the requested format; nil when none was asked.
	Chart []byte
	// Skipped lists the trace lines skipped under SkipBadLines, at most
	// MaxSkippedLines, the last counting the others (see CountSkipped).
	Skipped []LineError
}

// Simulate runs req: it builds the traffic, replays it through each
// algorithm with Run and draws the chart. Errors describe what in req to
// change; a bad trace line is a *LineError; traffic above req.MaxArrivals,
// or a replay whose estimated work is above req.MaxWork, is a
// *TooLargeError returned before any replay. When ctx is done Simulate
// returns ctx's error within about 1024 decisions of work (see MaxWork) of
// each running replay.
func Simulate(ctx context.Context, req Request) (*Response, error) {
	if req.Background {
		return background(ctx, req)
	}
	pl, err := req.prepare()
	if err != nil {
		return nil, err
	}
	resp := &Response{}
	var tr *Trace
	switch {
	case pl.pattern != nil:
		if tr, err = generateFor(ctx, *pl.pattern, pl.ref, req.MaxArrivals); err != nil {
			return nil, err
		}
		if p := pl.pattern; len(tr.Arrivals) == 0 {
			keys := "1 key"
			if p.Keys != 1 {
				keys = fmt.Sprintf("%d keys", p.Keys)
			}
			return nil, fmt.Errorf("pattern %s: no request in %s at %g a second per key, %s: raise the rate, keys or duration",
				p.Name, FormatDuration(p.Duration.D()), p.Rate, keys)
		}
	default:
		opts := CSVOptions{SkipBad: req.SkipBadLines, MaxArrivals: req.MaxArrivals, Name: req.TraceName}
		if tr, resp.Skipped, err = ReadCSV(pl.trace, opts); err != nil {
			return nil, err
		}
	}
	retry := pl.retry
	if req.Retry != nil {
		retry = *req.Retry
	}
	cfg := Config{Quantity: pl.rq, Window: pl.rw, Period: pl.ref.period, Offset: pl.ref.offset,
		Contenders: pl.contenders, Retry: retry, Seed: req.Seed, Workers: req.Workers}
	if err := checkWork(ctx, tr, cfg, req.MaxWork); err != nil {
		return nil, err
	}
	if resp.Result, err = Run(ctx, tr, cfg); err != nil {
		return nil, err
	}
	if pl.lim != pl.ref {
		resp.Result.Tested = pl.lim.String()
	}
	resp.Result.Omitted = pl.omitted
	if req.Chart != "" {
		if resp.Chart, err = Chart(resp.Result, req.Chart, 0, 0); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// Validate reports what Simulate would refuse in req without building or
// replaying any traffic: a bad limit, reference, algorithm, chart format,
// retry policy or pattern, both or neither of a pattern and a trace, and a
// pattern whose expected number of requests is above MaxArrivals, or whose
// work is surely above MaxWork (a lower estimate, for keys of uniform popularity), as a
// *TooLargeError. It reads no trace: a trace's size, and the exact
// estimate of a replay's work, are checked by Simulate after building the
// traffic and before replaying it.
func (req Request) Validate() error {
	_, err := req.prepare()
	return err
}

// prepared is a Request's parsed parameters.
type prepared struct {
	lim, ref   rate  // the limit's and the reference's
	q, rq      int64 // their quantities
	w, rw      time.Duration
	contenders []Contender
	omitted    []Omission // the algorithms of "all" that cannot hold the limit
	// Exactly one of pattern (defaults applied) and trace is set.
	pattern *Pattern
	trace   io.Reader
	retry   RetryPolicy // the pattern's
}

// reference reads req.Reference as calendarOf reads the limit, Zone and
// Starts applying to a calendar rate and, with a Zone, to a rate per 24h
// (then the calendar day of that zone, which refuses Starts as the limit
// does); a reference of any other window is read as written, unshifted.
func (req Request) reference() (rate, error) {
	ref, err := parseRate(req.Reference)
	if err != nil || (!ref.calendar() && (req.Zone == "" || ref.w != 24*time.Hour)) {
		return ref, err
	}
	return calendarOf(req.Reference, req.Zone, req.Starts)
}

// prepare parses and checks req's parameters, and a pattern's expected
// size against req.MaxArrivals.
func (req Request) prepare() (*prepared, error) {
	lim, err := calendarOf(req.Limit, req.Zone, req.Starts)
	if err != nil {
		return nil, err
	}
	q, w := lim.q, lim.w
	pl := &prepared{lim: lim, ref: lim}
	if req.Reference != "" {
		if pl.ref, err = req.reference(); err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
	}
	pl.q, pl.w, pl.rq, pl.rw = q, w, pl.ref.q, pl.ref.w
	maxWait := w / 10
	if req.MaxWait != nil {
		maxWait = req.MaxWait.D()
	}
	algs, err := ParseAlgorithms(strings.Join(req.Algorithms, ","))
	if err != nil {
		return nil, err
	}
	if allAlgorithms(req.Algorithms) {
		pl.contenders, pl.omitted, err = lim.possibleContenders(algs, req.Burst, maxWait)
	} else {
		pl.contenders, err = lim.contenders(algs, req.Burst, maxWait)
	}
	if err != nil {
		return nil, err
	}
	if req.Chart != "" && req.Chart != "png" && req.Chart != "svg" {
		return nil, fmt.Errorf("chart format %q: use png or svg", req.Chart)
	}
	if req.Retry != nil {
		if err := req.Retry.validate(); err != nil {
			return nil, err
		}
	}
	pl.trace = req.TraceReader
	if pl.trace == nil && req.Trace != "" {
		pl.trace = strings.NewReader(req.Trace)
	}
	switch {
	case req.Pattern != nil && pl.trace != nil:
		return nil, fmt.Errorf("give a pattern or a trace, not both")
	case req.Pattern != nil:
		p := *req.Pattern
		if p.Seed == 0 {
			p.Seed = req.Seed
		}
		p = p.WithDefaults(pl.rq, pl.rw) // traffic for the requirement
		if err := p.check(pl.ref, req.MaxArrivals); err != nil {
			return nil, err
		}
		if err := checkPatternWork(&p, pl.contenders, pl.ref, req.MaxWork); err != nil {
			return nil, fmt.Errorf("pattern %s: %w", p.Name, err)
		}
		pl.pattern, pl.retry = &p, p.Retry
	case pl.trace == nil:
		return nil, fmt.Errorf("no traffic: give a pattern (%s) or a trace", strings.Join(Patterns(), ", "))
	}
	return pl, nil
}
