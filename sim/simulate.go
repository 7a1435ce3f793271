package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
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

	// Limit is the requirement as ParseRate reads it, e.g. "100/1m".
	Limit string `json:"limit"`
	// Reference is the requirement every algorithm is measured against
	// (worst windows, decisions of the exact log) and that a pattern's
	// defaults are derived from, as ParseRate reads it; empty means Limit.
	// Set it to compare limits tuned below a requirement, e.g. a GCRA of
	// 80/1m burst 20 against 100/1m.
	Reference string `json:"reference,omitempty"`
	// Burst is the bucket algorithms' capacity; 0 means the quantity.
	Burst int64 `json:"burst,omitempty"`
	// MaxWait makes the leaky bucket a queue that delays up to MaxWait; nil
	// means a tenth of the window, 0 a meter (deciding as the token bucket).
	MaxWait *Duration `json:"max_wait,omitempty"`
	// Algorithms lists algorithm names (see ParseAlgorithms); empty means all
	// six.
	Algorithms []string `json:"algorithms,omitempty"`
	// Retry overrides the pattern's retry policy (and applies to a trace).
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Seed drives the pattern's and the retries' randomness.
	Seed uint64 `json:"seed,omitempty"`
	// Chart asks for a chart: "png", "svg" or "" for none.
	Chart string `json:"chart,omitempty"`
	// MaxArrivals bounds the traffic (≤ 0: DefaultMaxArrivals). A web
	// handler sets it lower; it is not read from JSON.
	MaxArrivals int `json:"-"`
}

// Response is Simulate's answer.
type Response struct {
	Result *Result
	// Chart is the chart in the requested format; nil when none was asked.
	Chart []byte
	// Skipped lists the trace lines skipped under SkipBadLines.
	Skipped []LineError
}

// Simulate runs req: it builds the traffic, replays it through each
// algorithm with Run and draws the chart. Errors describe what in req to
// change; a bad trace line is a *LineError.
func Simulate(ctx context.Context, req Request) (*Response, error) {
	q, w, err := ParseRate(req.Limit)
	if err != nil {
		return nil, err
	}
	rq, rw := q, w
	if req.Reference != "" {
		if rq, rw, err = ParseRate(req.Reference); err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
	}
	maxWait := w / 10
	if req.MaxWait != nil {
		maxWait = req.MaxWait.D()
	}
	algs, err := ParseAlgorithms(strings.Join(req.Algorithms, ","))
	if err != nil {
		return nil, err
	}
	contenders, err := Contenders(algs, q, w, req.Burst, maxWait)
	if err != nil {
		return nil, err
	}
	if req.Chart != "" && req.Chart != "png" && req.Chart != "svg" {
		return nil, fmt.Errorf("chart format %q: use png or svg", req.Chart)
	}
	resp := &Response{}
	var tr *Trace
	var retry RetryPolicy
	traceText := req.TraceReader
	if traceText == nil && req.Trace != "" {
		traceText = strings.NewReader(req.Trace)
	}
	switch {
	case req.Pattern != nil && traceText != nil:
		return nil, fmt.Errorf("give a pattern or a trace, not both")
	case req.Pattern != nil:
		p := *req.Pattern
		if p.Seed == 0 {
			p.Seed = req.Seed
		}
		p = p.WithDefaults(rq, rw) // traffic for the requirement
		retry = p.Retry
		if tr, err = Generate(p, rq, rw, req.MaxArrivals); err != nil {
			return nil, err
		}
	case traceText != nil:
		opts := CSVOptions{SkipBad: req.SkipBadLines, MaxArrivals: req.MaxArrivals, Name: req.TraceName}
		if tr, resp.Skipped, err = ReadCSV(traceText, opts); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("no traffic: give a pattern (%s) or a trace", strings.Join(Patterns(), ", "))
	}
	if req.Retry != nil {
		retry = *req.Retry
	}
	cfg := Config{Quantity: rq, Window: rw, Contenders: contenders, Retry: retry, Seed: req.Seed}
	if resp.Result, err = Run(ctx, tr, cfg); err != nil {
		return nil, err
	}
	if rq != q || rw != w {
		resp.Result.Tested = FormatRate(q, w)
	}
	if req.Chart != "" {
		if resp.Chart, err = Chart(resp.Result, req.Chart, 0, 0); err != nil {
			return nil, err
		}
	}
	return resp, nil
}
