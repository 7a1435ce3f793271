package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/bench"
)

// The targets of the leased quota.
const (
	targetPeerRatio   = 10.0                   // leased fleet ÷ fastest Redis peer, decisions/s, 10,000 Zipf keys
	targetCommands    = 0.05                   // Redis commands per decision, leased fleet
	targetHalfLoadP99 = 100 * time.Microsecond // decision p99 of the leased fleet at half its rate
	targetGlobalRatio = 5.0                    // global limit on a Cluster: leased ÷ not leased, decisions/s
	targetSteadyShare = 0.98                   // admitted ÷ promised at 2× the limit, steady traffic
	targetMovingShare = 0.90                   // the same when traffic moves between instances every second
)

// options are a report's settings (the command's flags).
type options struct {
	redis, cluster       string
	procs, callers, keys int
	d, promiseD, lead    time.Duration
	halfWarmup, halfD    time.Duration
	only                 []string
}

// runNames are the report's runs, in the order they run: the Redis peers,
// sluice with leases off and auto and sluice leased at half its rate
// (each under every throughput kind), the global limit on a Cluster, and
// the promise runs.
var runNames = []string{"peers", "sluice", "half", "global", "promise"}

func (o options) want(name string) bool { return slices.Contains(o.only, name) }

// start returns the start of a run launched now: lead from now; for a
// promise run, on the next whole second after that, so that its windows
// lie wholly in it.
func (o options) start(j job) time.Time {
	t := time.Now().Add(o.lead)
	if j.Mode == "promise" {
		t = t.Truncate(time.Second).Add(time.Second)
	}
	return t
}

// report runs o's runs, starting the Redis servers it is not given, writes
// their figures to w in Markdown and returns the targets' verdicts.
func report(w io.Writer, o options) ([]bench.Target, error) {
	for _, n := range o.only {
		if !slices.Contains(runNames, n) {
			return nil, fmt.Errorf("-only: unknown run %q (runs: %s)", n, strings.Join(runNames, ", "))
		}
	}
	if o.promiseD%time.Second != 0 || o.promiseD < 2*time.Second {
		return nil, fmt.Errorf("-promise-d %v: want whole seconds, at least 2", o.promiseD)
	}
	if o.redis == "" && (o.want("peers") || o.want("sluice") || o.want("half") || o.want("promise")) {
		srv, err := bench.StartRedis()
		if err != nil {
			return nil, err
		}
		defer srv.Stop()
		o.redis = srv.Addr
	}
	if o.cluster == "" && o.want("global") {
		c, err := startCluster()
		if err != nil {
			return nil, fmt.Errorf("starting a Cluster: %w", err)
		}
		defer c.stop()
		o.cluster = strings.Join(c.addrs, ",")
	}
	fmt.Fprintf(w, "Fleet: %d processes × %d callers; throughput and global runs %v each after %v of warm-up; ½-rate runs after %v "+
		"of warm-up for %s; promise runs %v; load average %s.\n\n",
		o.procs, o.callers, o.d, warmup, o.halfWarmup, o.halfSpanText(), o.promiseD, bench.LoadAvg())
	ts, err := throughput(w, o)
	if err != nil {
		return nil, err
	}
	if o.want("global") {
		t, err := global(w, o)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	if o.want("promise") {
		t, err := promises(w, o)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t...)
	}
	return ts, nil
}

// run measures one configuration and shows it on stderr as it ends.
func run(name, addr string, j job, o options) (fleetRun, error) {
	j.Callers, j.Keys, j.Start = o.callers, o.keys, o.start(j)
	if j.D == 0 {
		j.D = o.d
	}
	f, err := measure(name, addr, j, o.procs)
	if err == nil {
		fmt.Fprintln(os.Stderr, f)
	}
	return f, err
}

// throughputKind is one limit the throughput runs put on every key.
type throughputKind struct {
	name string // in run names and targets
	kind string // job.Kind
}

// throughputKinds are the throughput runs' limits, in the order they run:
// GCRA 1,000,000/s with a second's burst (its leases live a quarter of
// the burst's refill, 250 ms), GCRA 60,000,000 a minute with a minute's
// burst (15 s), and a fixed window of 60,000,000 a minute (its leases
// live to the window's end).
var throughputKinds = []throughputKind{
	{name: "GCRA " + thousands(throughputRate) + "/s", kind: kindGCRASecond},
	{name: "GCRA " + thousands(minuteQuota) + "/min", kind: kindGCRAMinute},
	{name: "window " + thousands(minuteQuota) + "/min", kind: kindWindow},
}

// throughput runs the peers and, for each throughput kind, sluice on
// o.keys Zipf keys, closed loop, and the leased fleet paced at half its
// rate; it judges each kind's leased fleet against the fastest peer.
func throughput(w io.Writer, o options) ([]bench.Target, error) {
	var runs []fleetRun
	var fastest fleetRun
	for _, p := range []string{"redis_rate", "ulule-redis", "throttled-redis"} {
		if !o.want("peers") {
			break
		}
		f, err := run(p, o.redis, job{Mode: "peer", Peer: p}, o)
		if err != nil {
			return nil, err
		}
		runs = append(runs, f)
		if f.rate > fastest.rate {
			fastest = f
		}
	}
	var ts []bench.Target
	for _, k := range throughputKinds {
		kr, kt, err := throughputOf(k, fastest, o)
		if err != nil {
			return nil, err
		}
		runs, ts = append(runs, kr...), append(ts, kt...)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	fmt.Fprintf(w, "### %s keys, Zipf(1.1): the peers at %s/s on each key (their own algorithms), sluice under each limit (every call admitted)\n\n",
		thousands(o.keys), thousands(throughputRate))
	table(w, runs)
	return ts, nil
}

// halfSpan returns the measurement of k's ½-rate run: -half-d, else -d but
// at least one whole window of k's limit and 2 s more. A window's end is
// when every key's leases end together and are taken again, each by the
// key's next call, which waits for Redis: the measurement meets it as
// often as steady traffic does, not by chance.
func (o options) halfSpan(k throughputKind) time.Duration {
	if o.halfD > 0 {
		return o.halfD
	}
	return max(o.d, throughputLimit(job{Kind: k.kind}).Window()+2*time.Second)
}

// halfSpanText says how long the ½-rate runs measure.
func (o options) halfSpanText() string {
	if o.halfD > 0 {
		return o.halfD.String()
	}
	return fmt.Sprintf("%v or one window of their limit and 2 s, the longer", o.d)
}

// throughputOf runs sluice with every key under k's limit, leases off and
// auto, then auto at half its rate, and judges the leased fleet's targets
// (fastest is the fastest peer of the same report, if the peers ran).
func throughputOf(k throughputKind, fastest fleetRun, o options) ([]fleetRun, []bench.Target, error) {
	var runs []fleetRun
	var off, auto, half fleetRun
	for _, on := range []bool{false, true} {
		if !o.want("sluice") {
			break
		}
		name, into := "sluice "+k.name+", lease off", &off
		if on {
			name, into = "sluice "+k.name+", lease auto", &auto
		}
		f, err := run(name, o.redis, job{Mode: "sluice", Lease: on, Kind: k.kind}, o)
		if err != nil {
			return nil, nil, err
		}
		runs, *into = append(runs, f), f
	}
	if o.want("half") && auto.rate > 0 {
		f, err := run("sluice "+k.name+", lease auto, ½ rate", o.redis,
			job{Mode: "sluice", Lease: true, Kind: k.kind, Rate: auto.rate / 2 / float64(o.procs), Warmup: o.halfWarmup, D: o.halfSpan(k)}, o)
		if err != nil {
			return nil, nil, err
		}
		runs, half = append(runs, f), f
	}
	var ts []bench.Target
	if fastest.rate > 0 && auto.rate > 0 {
		ts = append(ts, bench.Target{Pass: auto.rate >= targetPeerRatio*fastest.rate, Text: fmt.Sprintf(
			"Leased quota, %s on %s Zipf keys, %d processes × %d callers: sluice lease auto %.0f decisions/s ÷ the fastest Redis peer (%s) %.0f = %.1f×, target ≥ %.0f× (lease off: %.1f×)",
			k.name, thousands(o.keys), o.procs, o.callers, auto.rate, fastest.name, fastest.rate, auto.rate/fastest.rate, targetPeerRatio, off.rate/fastest.rate)})
	}
	if auto.cmds != nil {
		c := auto.commands()
		ts = append(ts, bench.Target{Pass: c <= targetCommands, Text: fmt.Sprintf(
			"Leased quota, %s: Redis commands per decision of the leased fleet %.3f (scripts sent: %.3f; decided from leases: %s), target ≤ %.2f",
			k.name, c, auto.per("evalsha"), auto.fromLeases(), targetCommands)})
	}
	if half.rate > 0 {
		ts = append(ts, bench.Target{Pass: half.p99 <= targetHalfLoadP99, Text: fmt.Sprintf(
			"Leased quota, %s: decision p99 at half the leased fleet's rate (%.0f decisions/s) %s, target ≤ %s",
			k.name, half.rate, micros(half.p99), micros(targetHalfLoadP99))})
	}
	return runs, ts, nil
}

// global runs one global limit on the Cluster, leases off and on.
func global(w io.Writer, o options) (bench.Target, error) {
	var runs []fleetRun
	for _, on := range []bool{false, true} {
		name := "global, lease off"
		if on {
			name = "global, lease auto"
		}
		f, err := run(name, o.cluster, job{Mode: "sluice", Lease: on, Global: true, Cluster: true}, o)
		if err != nil {
			return bench.Target{}, err
		}
		runs = append(runs, f)
	}
	fmt.Fprintf(w, "### One global limit (GCRA %s/s, one key) on a 3-master Cluster\n\n", thousands(throughputRate))
	table(w, runs)
	r := runs[1].rate / max(runs[0].rate, 1)
	return bench.Target{Pass: r >= targetGlobalRatio, Text: fmt.Sprintf(
		"Leased quota, one global limit on a 3-master Cluster: lease auto %.0f decisions/s ÷ lease off %.0f = %.1f×, target ≥ %.0f×",
		runs[1].rate, runs[0].rate, r, targetGlobalRatio)}, nil
}

// table writes runs as a Markdown table, with a line below for each run
// whose figures need a caveat.
func table(w io.Writer, runs []fleetRun) {
	rows := [][]string{{"run", "decisions/s", "p50 ms", "p99 ms", "Redis cmds/decision", "scripts/decision", "from leases", "admitted", "errors"}}
	var notes []string
	for _, f := range runs {
		cmds, scripts := "-", "-"
		if f.cmds != nil {
			cmds, scripts = fmt.Sprintf("%.3f", f.commands()), fmt.Sprintf("%.3f", f.per("evalsha"))
		}
		rows = append(rows, []string{f.name, fmt.Sprintf("%.0f", f.rate), bench.Ms(f.p50), bench.Ms(f.p99), cmds, scripts,
			f.fromLeases(), fmt.Sprintf("%.1f%%", 100*float64(f.admitted)/float64(max(f.calls, 1))), fmt.Sprint(f.errors)})
		if n := f.caveat(); n != "" {
			notes = append(notes, fmt.Sprintf("- %s: %s", f.name, n))
		}
	}
	bench.WriteTable(w, rows)
	fmt.Fprintln(w)
	if len(notes) > 0 {
		fmt.Fprintln(w, strings.Join(notes, "\n"))
		fmt.Fprintln(w)
	}
}

// commands returns Redis's commands per decision in the measured span.
func (f fleetRun) commands() float64 {
	var all int64
	for _, v := range f.cmds {
		all += v
	}
	return float64(all) / float64(max(f.calls, 1))
}

// per returns Redis's commands called name per decision.
func (f fleetRun) per(name string) float64 { return float64(f.cmds[name]) / float64(max(f.calls, 1)) }

// fromLeases returns the share of calls decided from leases, "-" when
// nothing was leased.
func (f fleetRun) fromLeases() string {
	if f.leaseCalls == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(f.local)/float64(f.leaseCalls))
}

// caveat says what makes f's figures less than they seem, if anything.
func (f fleetRun) caveat() string {
	var c []string
	if f.late > 50*time.Millisecond {
		c = append(c, fmt.Sprintf("a process began %v late (its calls and Redis's commands were counted over different spans)", f.late.Round(time.Millisecond)))
	}
	if f.fallback > 0 {
		c = append(c, fmt.Sprintf("%d decisions of the local fallback", f.fallback))
	}
	if f.firstErr != "" {
		c = append(c, "first error: "+f.firstErr)
	}
	return strings.Join(c, "; ")
}

func micros(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
