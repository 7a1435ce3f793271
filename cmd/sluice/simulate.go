package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluice-dev/sluice/sim"
)

const simulateUsage = `usage: sluice simulate [flags]

Replays traffic through every rate-limiting algorithm (the real sluice code, on
a virtual clock) with the same limit, and reports per algorithm: admitted,
rejected, the most units admitted for one key in any window W against the
limit, how many decisions differ from an exact sliding window log, queue
delays, and state per key. Traffic is a built-in pattern or a CSV trace.

Patterns: steady, boundary-burst, spike, diurnal, retry-storm, many-keys.
Trace: one request per line, time,key,cost — time in RFC 3339 or seconds
since the start, cost optional (1). The flags that shape a pattern's traffic
(-keys, -rate, -duration, -cost, -skew, -burst-size, -spread, -spike-*,
-period, -amplitude) are refused with -trace.

examples:
  sluice simulate -pattern boundary-burst -limit 100/1m
  sluice simulate -pattern many-keys -keys 5000 -format json
  sluice simulate -trace requests.csv -limit 10/1s -burst 20 -chart out.svg
  sluice simulate -pattern boundary-burst -limit 10000/month
  sluice simulate -trace requests.csv -limit 10000/month -zone +09:00 -starts 15

flags:
`

// runSimulate is "sluice simulate".
func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("simulate", simulateUsage, stderr)
	var (
		p        sim.Pattern
		retry    sim.RetryPolicy
		maxWait  sim.Duration
		pattern  = fs.String("pattern", sim.PatternSteady, "traffic pattern: "+strings.Join(sim.Patterns(), ", "))
		trace    = fs.String("trace", "", "CSV `file` of time,key,cost to replay instead of a pattern (\"-\": standard input)")
		skipBad  = fs.Bool("skip-bad-lines", false, "skip (and report) unreadable trace lines instead of failing")
		algs     = fs.String("algorithms", "all", "comma-separated `list` of algorithms")
		limit    = fs.String("limit", "100/1m", "the limit per key, `quantity/window` (a window of week, month or year is a calendar quota, e.g. 10000/month)")
		ref      = fs.String("reference", "", "measure against this `quantity/window` instead of -limit (e.g. -limit 80/1m -burst 20 -reference 100/1m)")
		zone     = fs.String("zone", "", "a calendar quota's zone: UTC (default) or a fixed offset such as +09:00; with a rate per day, that zone's calendar day")
		starts   = fs.String("starts", "", "a calendar quota's first day: a weekday for a week (default monday), a day from 1 to 28 for a month (default 1)")
		burst    = fs.Int64("burst", 0, "bucket capacity of token-bucket, leaky-bucket and gcra (default the quantity)")
		seed     = fs.Uint64("seed", 1, "random seed: the same seed gives the same traffic and figures")
		format   = fs.String("format", "table", "output: table or json")
		chart    = fs.String("chart", "", "write a chart to this `file` (.png or .svg)")
		maxWaitS = fs.String("max-wait", "", "leaky-bucket queue's longest delay, a `duration` (default a tenth of the window; 0 makes it a meter)")
		maxWork  = fs.Int64("max-work", sim.DefaultMaxWork, "refuse a simulation estimated above this many `decisions` of work before running it (a sliding window log's decision counts 1 more per 64 entries it sums); 0 bounds nothing")
	)
	fs.IntVar(&p.Keys, "keys", 0, "number of keys (default 1; many-keys 1000)")
	fs.Float64Var(&p.Rate, "rate", 0, "mean requests per second per key (default 1.2 × the limit's rate ÷ -cost; many-keys 0.5 ×)")
	fs.Var(&p.Duration, "duration", "how long the traffic lasts, a `duration` (default 10 windows)")
	fs.Int64Var(&p.Cost, "cost", 0, "units per request, ≥ 1 (default 1)")
	fs.Int64Var(&p.BurstSize, "burst-size", 0, "boundary-burst: requests per key on each side of a boundary (default a window's quantity)")
	fs.Var(&p.Spread, "spread", "boundary-burst: how long each half-burst lasts, a `duration` (default window/100)")
	fs.Var(&p.SpikeAt, "spike-at", "spike, retry-storm: when the spike starts, a `duration` from the start (default duration/3)")
	fs.Var(&p.SpikeLength, "spike-length", "spike, retry-storm: how long the spike lasts, a `duration` (default one window)")
	fs.Float64Var(&p.SpikeFactor, "spike-factor", 0, "spike, retry-storm: rate multiplier during the spike (default 10)")
	fs.Var(&p.Period, "period", "diurnal: length of one cycle, a `duration` (default the duration)")
	fs.Float64Var(&p.Amplitude, "amplitude", 0, "diurnal: swing around the mean rate, in (0, 1] (default 0.8)")
	fs.Float64Var(&p.Skew, "skew", 0, "Zipf exponent of key popularity, > 1 (default many-keys 1.1, others uniform)")
	fs.IntVar(&retry.Max, "retry-max", 0, "refused clients retry up to this many times (retry-storm default 5)")
	fs.Float64Var(&retry.Impatient, "retry-impatient", 0, "probability a retry ignores Retry-After (retry-storm default 0.5)")
	fs.Var(&retry.Gap, "retry-gap", "how soon an impatient client retries, a `duration` (retry-storm default 10ms)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q (flags go before nothing else; see sluice simulate -h)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *trace != "" {
		// A trace's lines hold its requests' times, keys and costs: a
		// flag that shapes a pattern's traffic would change nothing.
		var unused []string
		for _, name := range patternFlags {
			if set[name] {
				unused = append(unused, "-"+name)
			}
		}
		if len(unused) > 0 {
			return usageErrorf("%s with -trace: the flags of a built-in pattern's traffic; a trace's lines hold its requests (time,key,cost)", strings.Join(unused, ", "))
		}
	}

	if set["cost"] && p.Cost == 0 {
		return usageErrorf("-cost 0: a pattern's requests spend at least 1 unit; replay requests of cost 0 (peeks) from a -trace")
	}
	if *maxWork < 0 {
		return usageErrorf("-max-work %d: use a number of decisions, or 0 for no bound", *maxWork)
	}
	// A refused rate names its flag: sim's "rate" is -limit's value, not -rate.
	for _, f := range []struct{ name, value string }{{"limit", *limit}, {"reference", *ref}} {
		if _, _, err := sim.ParseRate(f.value); err != nil && (f.value != "" || f.name == "limit") {
			return usageErrorf("-%s: %w", f.name, err)
		}
	}
	req := sim.Request{Limit: *limit, Zone: *zone, Starts: sim.Starts(*starts), Reference: *ref, Burst: *burst, Seed: *seed,
		SkipBadLines: *skipBad, MaxWork: *maxWork}
	if *algs != "all" {
		req.Algorithms = strings.Split(*algs, ",")
	}
	if *maxWaitS != "" {
		if err := maxWait.Set(*maxWaitS); err != nil {
			return usageError{fmt.Errorf("-max-wait: %w", err)}
		}
		req.MaxWait = &maxWait
	}
	if *format != "table" && *format != "json" {
		return usageErrorf("-format %q: use table or json", *format)
	}
	if *chart != "" {
		f, err := sim.ChartFormat(*chart)
		if err != nil {
			return usageError{err}
		}
		req.Chart = f
	}
	if set["retry-max"] || set["retry-impatient"] || set["retry-gap"] {
		base := sim.RetryPolicy{}
		if *trace == "" && *pattern == sim.PatternRetryStorm {
			base = sim.DefaultRetryStorm()
		}
		if set["retry-max"] {
			base.Max = retry.Max
		}
		if set["retry-impatient"] {
			base.Impatient = retry.Impatient
		}
		if set["retry-gap"] {
			base.Gap = retry.Gap
		}
		req.Retry = &base
	}
	if *trace != "" {
		if set["pattern"] {
			return usageErrorf("-pattern and -trace: give one source of traffic")
		}
		f, err := openInput(*trace)
		if err != nil {
			return err
		}
		defer f.Close()
		req.TraceReader, req.TraceName = f, filepath.Base(inputName(*trace))
	} else {
		p.Name = *pattern
		req.Pattern = &p
	}

	if err := req.Validate(); err != nil {
		return usageError{withMaxWorkHint(err)} // every parameter it reads came from a flag
	}
	if st, err := os.Lstat(*chart); *chart != "" && (err != nil || st.Mode().IsRegular()) {
		// A chart file that cannot be written fails before the
		// simulation's work, not after it. (A pipe or device is opened
		// once, when the chart is drawn.)
		probe, err := preparePendingFile("-chart", *chart, "")
		if err != nil {
			return err
		}
		probe.discard()
	}
	resp, err := sim.Simulate(ctx, req)
	if err != nil {
		var le *sim.LineError
		if errors.As(err, &le) {
			return fmt.Errorf("%s: %w (or use -skip-bad-lines)", inputName(*trace), err)
		}
		return withMaxWorkHint(err)
	}
	reportSkipped(stderr, inputName(*trace), resp.Skipped)
	if *chart != "" {
		pending, err := preparePendingFile("-chart", *chart, string(resp.Chart))
		if err == nil {
			err = pending.commit()
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "chart written to %s\n", *chart)
	}
	if *format == "json" {
		resp.Result.Chart = nil // the series are for drawing; -chart draws them
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(resp.Result)
	}
	return sim.WriteTable(stdout, resp.Result)
}

// patternFlags are simulate's flags that shape a built-in pattern's
// traffic (sim.Pattern's fields), which a -trace does not use. -pattern
// itself is refused with -trace on its own; -seed and -retry-* apply to a
// trace as well (the retries' randomness, refused clients retrying).
var patternFlags = []string{"keys", "rate", "duration", "cost", "burst-size", "spread",
	"spike-at", "spike-length", "spike-factor", "period", "amplitude", "skew"}

// withMaxWorkHint adds to a simulation refused for its work how to allow
// it anyway.
func withMaxWorkHint(err error) error {
	var tl *sim.TooLargeError
	if errors.As(err, &tl) && tl.Bound == "work" {
		return fmt.Errorf("%w (or raise -max-work, 0 for no bound)", err)
	}
	return err
}

// reportSkipped lists skipped trace lines on stderr, the first 20 in full.
func reportSkipped(w io.Writer, file string, skipped []sim.LineError) {
	for i, le := range skipped {
		if i == 20 {
			fmt.Fprintf(w, "%s: … and %d more lines skipped\n", file, sim.CountSkipped(skipped[i:]))
			break
		}
		fmt.Fprintf(w, "%s: %v (skipped)\n", file, &le)
	}
}
