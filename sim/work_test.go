package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// heavy is the request of a designer run that took half a minute of CPU:
// 180,000 requests against a sliding window log of 150,000 per minute,
// whose every decision sums up to 150,000 entries.
func heavy() Request {
	return Request{Limit: "150000/1m", Pattern: &Pattern{Name: PatternSteady, Duration: Duration(time.Minute), Rate: 3000}}
}

// A done context stops Simulate within a small multiple of its deadline,
// even in the middle of a replay whose decisions each sum a long log.
// Building the traffic and the replay's memory is not interruptible (it is
// linear in the requests, which MaxArrivals bounds): the bound is counted
// from what a run whose context is done before it starts takes, measured
// before and after the run under test, twice the longer of the two (a
// machine shared with other work may slow one run threefold; a replay to
// the end takes minutes under the race detector).
func TestSimulateStopsAtItsDeadline(t *testing.T) {
	for name, req := range map[string]Request{
		"long logs": heavy(),
		"many constant-time decisions": {Limit: "100/1s", Algorithms: []string{"gcra", "fixed-window"},
			Pattern: &Pattern{Name: PatternSteady, Keys: 100, Rate: 1000, Duration: Duration(20 * time.Second)}},
	} {
		t.Run(name, func(t *testing.T) {
			setup := func() time.Duration {
				done, cancel := context.WithCancel(context.Background())
				cancel()
				start := time.Now()
				if _, err := Simulate(done, req); !errors.Is(err, context.Canceled) {
					t.Fatalf("err %v, want context.Canceled", err)
				}
				return time.Since(start)
			}
			before := setup()
			const deadline = 200 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			start := time.Now()
			_, err := Simulate(ctx, req)
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want the context's deadline", err)
			}
			after := setup()
			if most := 2*max(before, after) + 3*deadline; took > most {
				t.Errorf("stopped %v after its start, with a deadline of %v (%v and %v without replaying): more than %v",
					took, deadline, before, after, most)
			}
		})
	}
}

// MaxWork refuses the heavy run before replaying it, with an error naming
// the bound and the estimate.
func TestMaxWorkRefusesBeforeReplaying(t *testing.T) {
	req := heavy()
	req.MaxArrivals, req.MaxWork = 200_000, 10_000_000
	start := time.Now()
	_, err := Simulate(context.Background(), req)
	took := time.Since(start)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Bound != "work" || tl.Max != req.MaxWork || tl.Size <= tl.Max {
		t.Fatalf("err %v (%+v), want a *TooLargeError on work", err, tl)
	}
	if !strings.Contains(err.Error(), "10000000") {
		t.Errorf("%q does not name the bound", err)
	}
	if took > 2*time.Second {
		t.Errorf("refused after %v: it replayed", took)
	}
	// Its keys are uniform: Validate refuses it without generating it.
	if err := req.Validate(); !errors.As(err, &tl) || tl.Bound != "work" {
		t.Errorf("Validate: %v, want a *TooLargeError on work", err)
	}
	// The same traffic against a limit whose decisions cost no log sums:
	// within the bound.
	req.Algorithms = []string{"gcra"}
	req.Reference = "100/1s"
	if err := checkWorkOf(t, req); err != nil {
		t.Errorf("gcra against a small reference: %v", err)
	}
}

func checkWorkOf(t *testing.T, req Request) error {
	t.Helper()
	pl, err := req.prepare()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Generate(*pl.pattern, pl.rq, pl.rw, req.MaxArrivals)
	if err != nil {
		t.Fatal(err)
	}
	return checkWork(context.Background(), tr, Config{Quantity: pl.rq, Window: pl.rw, Contenders: pl.contenders, Retry: pl.retry}, req.MaxWork)
}

// Validate refuses a pattern above MaxArrivals from its expectation,
// without generating it: a pattern of 10^12 requests is refused at once.
func TestValidateRefusesTooManyRequestsWithoutGenerating(t *testing.T) {
	req := Request{Limit: "100/1m", MaxArrivals: 200_000,
		Pattern: &Pattern{Name: PatternManyKeys, Keys: 1_000_000, Rate: 1000, Duration: Duration(1000 * time.Second)}}
	start := time.Now()
	err := req.Validate()
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Bound != "requests" || tl.Max != 200_000 || tl.Size != 1e12 {
		t.Fatalf("err %v (%+v), want a *TooLargeError of 10^12 requests", err, tl)
	}
	// Generating 10^12 requests would take hours: a second is far above
	// Validate's arithmetic on a loaded machine, and far below that.
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v: it generated the pattern", took)
	}
	if _, err := Simulate(context.Background(), req); !errors.As(err, &tl) {
		t.Errorf("Simulate: %v", err)
	}
	if err := heavy().Validate(); err != nil {
		t.Errorf("the heavy run is within the default bounds: %v", err)
	}
	if err := (Request{Limit: "100/1m"}).Validate(); err == nil || !strings.Contains(err.Error(), "no traffic") {
		t.Errorf("no traffic: %v", err)
	}
}

// A trace above MaxArrivals is a *TooLargeError too.
func TestTraceAboveMaxArrivals(t *testing.T) {
	req := Request{Limit: "10/1s", Trace: "0,a\n0.1,a\n0.2,b\n", MaxArrivals: 2}
	var tl *TooLargeError
	if _, err := Simulate(context.Background(), req); !errors.As(err, &tl) || tl.Bound != "requests" || tl.Max != 2 {
		t.Fatalf("err %v, want a *TooLargeError on requests", err)
	}
}

// logEntries is the brute-force sum it stands for: for every request, the
// spending requests of its key in (t-w, t] (itself included), at most q.
func TestLogEntriesCountsTheWindowOfEachKey(t *testing.T) {
	trace, _, err := ReadCSV(strings.NewReader("0,a\n0.5,b\n1,a\n1,a,0\n1.5,a\n2,a\n2,b\n3.5,a\n"), CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := time.Second
	for _, q := range []int64{1, 2, 100} {
		var want int64
		for i, a := range trace.Arrivals {
			var n int64
			for _, b := range trace.Arrivals[:i+1] {
				if b.Key == a.Key && b.Cost > 0 && b.At > a.At-int64(w/time.Microsecond) {
					n++
				}
			}
			want += min(n, q)
		}
		if got := logEntries(trace, q, w, 1); got != want {
			t.Errorf("q %d: %d entries, want %d", q, got, want)
		}
	}
}

// The estimate is an upper bound of the decisions Run makes, with and
// without retries.
func TestEstimateWorkBoundsTheDecisions(t *testing.T) {
	for _, req := range []Request{
		{Limit: "100/1m", Pattern: &Pattern{Name: PatternBoundaryBurst}},
		{Limit: "100/1m", Pattern: &Pattern{Name: PatternRetryStorm}},
		{Limit: "50/1m", Reference: "100/1m", Pattern: &Pattern{Name: PatternSpike}},
		{Limit: "20/1s", Algorithms: []string{"gcra", "concurrency"}, Pattern: &Pattern{Name: PatternManyKeys, Keys: 30, Duration: Duration(time.Minute)}},
	} {
		pl, err := req.prepare()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Generate(*pl.pattern, pl.rq, pl.rw, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Quantity: pl.rq, Window: pl.rw, Contenders: pl.contenders, Retry: pl.retry}
		res, err := Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var decided int64
		for _, a := range res.Algorithms {
			decided += a.Decisions
		}
		if est := estimateWork(tr, cfg); est < decided {
			t.Errorf("%s: estimated %d, below the %d decisions made", req.Pattern.Name, est, decided)
		}
	}
}

// One worker, on the caller's goroutine, gives the same results as many.
func TestOneWorkerGivesTheSameResult(t *testing.T) {
	for _, req := range []Request{
		{Limit: "100/1m", Pattern: &Pattern{Name: PatternBoundaryBurst}},
		{Limit: "100/1m", Pattern: &Pattern{Name: PatternRetryStorm}},
	} {
		many := simulate(t, req)
		req.Workers = 1
		one := simulate(t, req)
		for i, a := range many.Algorithms {
			if one.Algorithms[i] != a {
				t.Errorf("%s, one worker: %+v, want %+v", req.Pattern.Name, one.Algorithms[i], a)
			}
		}
	}
}

// The lower estimate Validate refuses a pattern on is below the estimate
// Simulate refuses its traffic on: Validate never refuses a pattern that
// Simulate would run.
func TestPatternWorkIsBelowTheTraceEstimate(t *testing.T) {
	for _, limit := range []string{"100/1m", "3000/1m", "20/1s"} {
		for _, p := range []Pattern{
			{Name: PatternSteady}, {Name: PatternSteady, Keys: 50, Rate: 0.3},
			{Name: PatternBoundaryBurst}, {Name: PatternBoundaryBurst, Rate: 1, Keys: 3},
			{Name: PatternSpike}, {Name: PatternSpike, SpikeFactor: 0.2},
			{Name: PatternDiurnal}, {Name: PatternRetryStorm}, {Name: PatternManyKeys, Skew: 0.5, Keys: 40},
			{Name: PatternSteady, Duration: Duration(90 * time.Second)},
		} {
			for _, algs := range [][]string{nil, {"gcra"}, {"sliding-window-log", "concurrency"}} {
				req := Request{Limit: limit, Pattern: &p, Algorithms: algs}
				pl, err := req.prepare()
				if err != nil {
					t.Fatalf("%s %+v: %v", limit, p, err)
				}
				tr, err := Generate(*pl.pattern, pl.rq, pl.rw, 0)
				if err != nil {
					t.Fatal(err)
				}
				lower := patternWork(pl.pattern, pl.contenders, pl.ref)
				upper := estimateWork(tr, Config{Quantity: pl.rq, Window: pl.rw, Contenders: pl.contenders, Retry: pl.retry})
				if lower > upper {
					t.Errorf("%s %s %v: lower estimate %d above the traffic's %d", limit, p.Name, algs, lower, upper)
				}
			}
		}
	}
}

// The size a refusal states is the expected number of requests, or none
// when that number is beyond an int64: never a figure it is not.
func TestTooManyRequestsStatesTheirTrueNumber(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate float64
		want float64 // rate × 10 s, by hand; 0: no size stated
	}{
		{"within int64", 2e6, 2e7},
		{"far beyond int64", 1e300, 0},
		{"just beyond int64", 1e18, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Limit: "10/1s",
				Pattern: &Pattern{Name: PatternSteady, Rate: tc.rate, Duration: Duration(10 * time.Second)}}
			var tl *TooLargeError
			if err := req.Validate(); !errors.As(err, &tl) {
				t.Fatalf("err %v, want a *TooLargeError", err)
			}
			if tc.want == 0 && tl.Size != 0 || tc.want != 0 && math.Abs(float64(tl.Size)-tc.want) > 1 {
				t.Errorf("size %d (%v), want %g (0: none)", tl.Size, tl, tc.want)
			}
		})
	}
}

// A retry policy Run would refuse is refused by Validate, before any
// traffic is built: for a pattern and for a trace, which Validate does not
// read.
func TestValidateRefusesABadRetryPolicy(t *testing.T) {
	for _, retry := range []RetryPolicy{{Max: 101}, {Max: -1}, {Max: 1, Impatient: 2}, {Max: 1, Gap: Duration(-time.Second)}} {
		for _, req := range []Request{
			{Limit: "10/1s", Pattern: &Pattern{Name: PatternSteady}, Retry: &retry},
			{Limit: "10/1s", Trace: "not a trace", Retry: &retry},
		} {
			if err := req.Validate(); err == nil || !strings.HasPrefix(err.Error(), "retry: ") {
				t.Errorf("%+v with a trace %v: %v, want the retry policy refused", retry, req.Trace != "", err)
			}
		}
	}
}
