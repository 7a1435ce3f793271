package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/bench"
)

// promiseQ is every promise limit's quota: units per second, and a
// bucket's burst.
const promiseQ = 2000

// inFlight is how long after a run's end a call made before it may still
// be decided by Redis, and so be counted in the window after the run.
const inFlight = 100 * time.Millisecond

// promiseRun is one promise run's configuration.
type promiseRun struct {
	name         string
	moving, kill bool
}

var promiseRuns = []promiseRun{
	{name: "steady"},
	{name: "moving", moving: true},
	{name: "kill -9", kill: true},
}

// promiseFig is what the fleet admitted on one limit in one promise run.
type promiseFig struct {
	alg string
	// got is the units admitted; most the most the limit allows over the
	// run's span with calls in flight at its end (windows touched × Q; a
	// bucket's burst plus its refill over the span); promised what it
	// allows over the run itself (whole windows × Q; burst + refill).
	got, most, promised int64
	// steady is the admitted share of Q in the run's whole seconds after
	// its first, when every bucket has been drained.
	steady float64
}

func (p promiseFig) over() int64      { return max(p.got-p.most, 0) }
func (p promiseFig) share() float64   { return float64(p.got) / float64(p.promised) }
func (p promiseFig) String() string   { return fmt.Sprintf("%s %.2f%%", p.alg, 100*p.share()) }
func (p promiseFig) overText() string { return fmt.Sprintf("%s %d", p.alg, p.over()) }

// promises runs the promise runs with leases on: the fleet offers twice
// what each limit admits, on one key per leasable algorithm, and counts
// what it admits per second of the clock.
func promises(w io.Writer, o options) ([]bench.Target, error) {
	rows := [][]string{{"run", "algorithm", "admitted", "most allowed", "over", "promised", "admitted ÷ promised", "steady ÷ Q/s"}}
	var ts []bench.Target
	var offered []string
	for _, pr := range promiseRuns {
		j := job{Mode: "promise", Lease: true, Moving: pr.moving, Kill: pr.kill, D: o.promiseD}
		f, err := run("promise "+pr.name, o.redis, j, o)
		if err != nil {
			return nil, err
		}
		figs := promiseFigures(f, o.promiseD)
		over, shares := make([]string, len(figs)), make([]string, len(figs))
		pass, least := true, 1e9
		for i, p := range figs {
			rows = append(rows, []string{pr.name, p.alg, fmt.Sprint(p.got), fmt.Sprint(p.most), fmt.Sprint(p.over()), fmt.Sprint(p.promised),
				fmt.Sprintf("%.1f%%", 100*p.share()), fmt.Sprintf("%.1f%%", 100*p.steady)})
			over[i], shares[i] = p.overText(), p.String()
			pass = pass && p.over() == 0
			least = min(least, p.share())
		}
		planned := 2 * promiseQ * int64(len(figs)) * int64(o.promiseD/time.Second)
		offered = append(offered, fmt.Sprintf("%s %d of %d (%.0f%%)", pr.name, f.calls, planned, 100*float64(f.calls)/float64(planned)))
		ts = append(ts, bench.Target{Pass: pass, Text: fmt.Sprintf(
			"Leased quota, promise (%s, 2× the limit offered): units admitted over the most allowed: %s; target 0 for every algorithm",
			pr.name, strings.Join(over, ", "))})
		target := map[string]float64{"steady": targetSteadyShare, "moving": targetMovingShare}[pr.name]
		if target > 0 {
			ts = append(ts, bench.Target{Pass: least >= target, Text: fmt.Sprintf(
				"Leased quota, promise (%s, 2× the limit offered over %v): admitted ÷ promised %s; target ≥ %.0f%% for every algorithm",
				pr.name, o.promiseD, strings.Join(shares, ", "), 100*target)})
		}
	}
	fmt.Fprintf(w, "### The promise: %d keys, one per leasable algorithm, %s units/s each (buckets: burst %s), %v per run, leases on\n\n",
		len(promiseLimits()), thousands(promiseQ), thousands(promiseQ), o.promiseD)
	bench.WriteTable(w, rows)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Calls offered over the five keys against the 2× planned (a shortfall means the pacing was not kept): %s. "+
		"In the kill -9 run process 0 stops at half the run and is killed with SIGKILL holding its leases.\n\n", strings.Join(offered, "; "))
	return ts, nil
}

// promiseFigures returns f's figures per promise limit, f a promise run of
// d (whole seconds) from a whole second.
func promiseFigures(f fleetRun, d time.Duration) []promiseFig {
	secs := int64(d / time.Second)
	// The windows [start, end + inFlight] touches: the run's and the one
	// after it, where calls in flight at the end may be counted.
	touched := (d + inFlight + time.Second - 1) / time.Second
	var figs []promiseFig
	for _, l := range promiseLimits() {
		alg := l.Algorithm().String()
		p := promiseFig{alg: alg}
		var steady int64
		for k, n := range f.admits[alg] {
			p.got += n
			if k >= 1 && int64(k) < secs {
				steady += n
			}
		}
		switch alg {
		case "fixed-window", "sliding-window-counter":
			p.most, p.promised = int64(touched)*promiseQ, secs*promiseQ
		default:
			p.most = promiseQ + int64((d+inFlight).Seconds()*promiseQ)
			p.promised = promiseQ + secs*promiseQ
		}
		p.steady = float64(steady) / float64(max(secs-1, 1)*promiseQ)
		figs = append(figs, p)
	}
	return figs
}
