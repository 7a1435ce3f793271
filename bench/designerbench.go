package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The designer's isolation target: the decision API's p99 while the
// designer is asked for 4 × its concurrency cap of simulations at once
// stays within TargetDesignerP99Ratio × its p99 without them.
const TargetDesignerP99Ratio = 2.0

// Designer requests of the isolation measurement.
const (
	// DesignerHeavyAccepted is about the largest simulation the designer's
	// default bounds accept (about 9,500,000 of the 10,000,000 decisions of
	// work): 180,000 requests, a sliding log of up to 3,000 entries.
	DesignerHeavyAccepted = `{"limit":"3000/1m","pattern":{"name":"steady","duration":"180s","rate":1000}}`
	// DesignerFinding is the request of the finding: 180,000 requests
	// against a sliding log of 150,000 a minute, half a minute of CPU each
	// before the work bound (now refused at once, 422).
	DesignerFinding = `{"limit":"150000/1m","pattern":{"name":"steady","duration":"1m","rate":3000}}`
)

// DesignerOptions configures the designer isolation measurement.
type DesignerOptions struct {
	// Self is this program; started with -serve <config> it runs the
	// sluice server (ServeSluice).
	Self string
	// Rate is the decision API's paced load, calls/s, over Conns
	// connections.
	Rate  float64
	Conns int
	// Time is each phase's measurement; Rounds the (quiet, loaded) pairs,
	// interleaved in time.
	Time   time.Duration
	Rounds int
	// Runners is the number of designer clients of a loaded phase; 0 means
	// 4 × the server's cap (its GOMAXPROCS, the cores of this machine).
	Runners int
	// Body is what each designer client asks for; "" means
	// DesignerHeavyAccepted.
	Body string
}

// designerPhase is one phase's measurements.
type designerPhase struct {
	loaded   bool
	res      LoadResult
	cpu      time.Duration // the server's
	outcomes map[string]int64
	// What the latency is made of: the server's goroutines' wait to run
	// (Go scheduler), the time the server's and this process's threads
	// waited for a CPU (OS), the machine's busy share, the server's GC.
	sched               time.Duration // p99
	serverWait, genWait time.Duration
	busy                float64
	gcCycles            uint64
	others              time.Duration // busy time of other processes
	generator           time.Duration // this process's CPU
}

// RunDesigner measures the decision API (POST /v1/check, paced) of a
// sluice server in its own process, alternately alone and while Runners
// clients ask its designer (POST /designer/run) for simulations back to
// back (after the Retry-After of a 503), and writes the figures and the
// verdict to w.
func RunDesigner(w io.Writer, o DesignerOptions) (Target, error) {
	if o.Body == "" {
		o.Body = DesignerHeavyAccepted
	}
	if o.Runners <= 0 {
		o.Runners = 4 * numCPU()
	}
	tmp, err := os.MkdirTemp("", "sluice-bench-designer-")
	if err != nil {
		return Target{}, err
	}
	defer os.RemoveAll(tmp)
	keys := APIKeys(ServerKeys)
	file := filepath.Join(tmp, "sluice.yaml")
	// The decision API and the designer are on the admin listener, which
	// grants loopback callers what the measurement needs.
	extra := "listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\n  loopback_scopes: [read, check]\n"
	if err := os.WriteFile(file, []byte(ConfigYAML(keys, extra)), 0o644); err != nil {
		return Target{}, err
	}
	srv, err := StartChild(o.Self, nil, "-serve", file)
	if err != nil {
		return Target{}, fmt.Errorf("sluice server: %w", err)
	}
	defer srv.Stop()
	// The admin listener's address, from the server's ready line (its only
	// listener's when it prints no admin=).
	host := srv.Vars["admin"]
	if host == "" {
		host = srv.Vars["http"]
	}
	base := "http://" + host
	checkReqs := rawRequests(keys, http.MethodPost, host, "/v1/check",
		func(string) []string { return []string{"Content-Type", "application/json"} },
		func(k string) string { return `{"api_key":"` + k + `","method":"GET","path":"/v1/items"}` })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * o.Runners}}
	defer client.CloseIdleConnections()

	// One heavy run alone, and the finding's request: how long each takes.
	alone, status, err := designerPost(context.Background(), client, base, o.Body)
	if err != nil || status != http.StatusOK {
		return Target{}, fmt.Errorf("the designer request alone: status %d, %v", status, err)
	}
	findingTook, findingStatus, err := designerPost(context.Background(), client, base, DesignerFinding)
	if err != nil {
		return Target{}, fmt.Errorf("the finding's request: %w", err)
	}
	// The finding: 40 of its requests at once.
	burst := designerBurst(client, base, DesignerFinding, 40)

	var phases []designerPhase
	for round := 1; round <= o.Rounds; round++ {
		for _, loaded := range []bool{false, true} {
			fmt.Fprintf(os.Stderr, "report: designer isolation round %d of %d, %s\n", round, o.Rounds, map[bool]string{false: "quiet", true: "loaded"}[loaded])
			ph := designerPhase{loaded: loaded}
			var stop func() map[string]int64
			if loaded {
				stop = designerLoad(client, base, o.Body, o.Runners)
				time.Sleep(time.Second) // the runs start and the slots fill
			}
			conns := &connSet{}
			var (
				c0, g0, sw0, gw0 time.Duration
				rt0              RuntimeStats
				m0               MachineCPU
				w0               time.Time
			)
			ph.res = PacedHooks(o.Conns, o.Rate, serverWarmup/2, o.Time, func(w int) CallFunc {
				return httpCaller(w, conns, host, checkReqs, nil)
			}, Hooks{Begin: func() {
				rt0 = fetchRuntimeStats(srv.Vars["pprof"])
				c0, g0, sw0, gw0 = CPUTime(srv.Pid()), CPUTime(0), RunQueueWait(srv.Pid()), RunQueueWait(0)
				m0, w0 = ReadMachineCPU(), time.Now()
			}, End: func() {
				m := ReadMachineCPU().Sub(m0)
				ph.busy = m.Busy.Seconds() / (time.Since(w0).Seconds() * float64(numCPU()))
				ph.cpu, ph.generator = CPUTime(srv.Pid())-c0, CPUTime(0)-g0
				ph.others = max(0, m.Busy-m.IRQ-ph.cpu-ph.generator)
				ph.serverWait, ph.genWait = RunQueueWait(srv.Pid())-sw0, RunQueueWait(0)-gw0
				rt := fetchRuntimeStats(srv.Vars["pprof"]).Sub(rt0)
				ph.sched, ph.gcCycles = rt.SchedLat.Quantile(0.99), rt.GCCycles
			}})
			conns.close()
			if stop != nil {
				ph.outcomes = stop()
			}
			if ph.res.Errors > 0 {
				return Target{}, fmt.Errorf("decision API: %d errors, the first: %v", ph.res.Errors, ph.res.FirstErr)
			}
			fmt.Fprintf(os.Stderr, "report:   p99 %s ms (from schedule %s ms), server CPU %.2f cores\n",
				Ms(Pct(ph.res.Lat, 99)), Ms(Pct(ph.res.Late, 99)), ph.cpu.Seconds()/ph.res.Elapsed.Seconds())
			phases = append(phases, ph)
		}
	}

	fmt.Fprintf(w, "## Designer isolation: the decision API while the designer is asked for %d simulations at once\n\n", o.Runners)
	fmt.Fprintf(w, "The server runs as `sluice serve` does (bench.ServeSluice: `server.OpenStore`, `server.New`, `Serve` on a loopback "+
		"listener) in its own process, memory store, the bench plan (3 limits) and %d API keys; its designer admits "+
		"one simulation per core (%d here) and answers the excess 503 with Retry-After. The decision API (POST /v1/check) "+
		"is paced at %.0f calls/s over %d keep-alive connections (bench.PacedHooks, RawHTTP), %v per phase, in %d rounds "+
		"of a quiet phase then a loaded one. In a loaded phase %d clients (net/http) each post `%s` to /designer/run back "+
		"to back, sleeping a 503's Retry-After before asking again; the phase starts 1 s after them. Latency = a call's "+
		"start to its end; from schedule = from the time the pacing gave the call (includes a worker falling behind). "+
		"Server Go sched p99 = the 99th percentile of the time the server's goroutines waited to run once runnable "+
		"(runtime/metrics /sched/latencies); CPU wait = the time the server's and this process's threads waited for a "+
		"CPU (/proc/<pid>/task/*/schedstat, threads that exited during the phase not counted: the designer's end with their run, so the server's can come out negative), per second; machine busy = all cores; others = busy time of neither "+
		"process (the machine's other work).\n\n",
		ServerKeys, numCPU(), o.Rate, o.Conns, o.Time, o.Rounds, o.Runners, o.Body)
	fmt.Fprintf(w, "That request alone: %v. The finding's request (`%s`): %d in %v; 40 of them at once: %s.\n\n",
		alone.Round(time.Millisecond), DesignerFinding, findingStatus, findingTook.Round(time.Millisecond), burst)
	rows := [][]string{{"round", "phase", "calls/s", "p50 ms", "p99 ms", "p99.9 ms", "p99 from schedule ms", "server CPU (cores)",
		"server Go sched p99 ms", "server / generator CPU wait (ms/s)", "machine busy", "others (cores)", "server GCs", "designer answers"}}
	var quiet, loaded []time.Duration
	for i, ph := range phases {
		name := "quiet"
		if ph.loaded {
			name = "loaded"
			loaded = append(loaded, Pct(ph.res.Lat, 99))
		} else {
			quiet = append(quiet, Pct(ph.res.Lat, 99))
		}
		rows = append(rows, []string{strconv.Itoa(i/2 + 1), name, fmt.Sprintf("%.0f", ph.res.Rate()), Ms(Pct(ph.res.Lat, 50)),
			Ms(Pct(ph.res.Lat, 99)), Ms(Pct(ph.res.Lat, 99.9)), Ms(Pct(ph.res.Late, 99)),
			fmt.Sprintf("%.2f", ph.cpu.Seconds()/ph.res.Elapsed.Seconds()), Ms(ph.sched),
			fmt.Sprintf("%.0f / %.0f", ph.serverWait.Seconds()*1000/ph.res.Elapsed.Seconds(), ph.genWait.Seconds()*1000/ph.res.Elapsed.Seconds()),
			fmt.Sprintf("%.0f%%", 100*ph.busy), fmt.Sprintf("%.2f", ph.othersCores()),
			strconv.FormatUint(ph.gcCycles, 10), formatOutcomes(ph.outcomes)})
	}
	WriteTable(w, rows)
	fmt.Fprintln(w)
	// The rounds in which the machine's other work took less than a tenth
	// of a core in both phases: the others' bursts fall in one phase or the
	// other, and only the designer should differ between them.
	var calmQuiet, calmLoaded []time.Duration
	for i := 0; i+1 < len(phases); i += 2 {
		if phases[i].othersCores() < calmOthers && phases[i+1].othersCores() < calmOthers {
			calmQuiet, calmLoaded = append(calmQuiet, quiet[i/2]), append(calmLoaded, loaded[i/2])
		}
	}
	which := fmt.Sprintf("the %d rounds in which other processes took < %.1f core in both phases", len(calmQuiet), calmOthers)
	if len(calmQuiet) < 3 {
		calmQuiet, calmLoaded = quiet, loaded
		which = fmt.Sprintf("all %d rounds: fewer than 3 had other processes below %.1f core in both phases", len(quiet), calmOthers)
	}
	q, l := medianDuration(calmQuiet), medianDuration(calmLoaded)
	ratio := float64(l) / float64(q)
	t := Target{Pass: ratio <= TargetDesignerP99Ratio, Text: fmt.Sprintf(
		"decision API p99 with %d designer runs asked at once: %s ms ÷ %s ms without = %.2f× (target ≤ %.0f×; medians of %s)",
		o.Runners, Ms(l), Ms(q), ratio, TargetDesignerP99Ratio, which)}
	fmt.Fprintf(w, "All rounds: medians %s ms loaded ÷ %s ms quiet = %.2f×.\n\n", Ms(medianDuration(loaded)), Ms(medianDuration(quiet)),
		float64(medianDuration(loaded))/float64(medianDuration(quiet)))
	fmt.Fprintf(w, "**%s** %s\n\n", t.Verdict(), t.Text)
	return t, nil
}

// calmOthers is the most CPU, in cores, that other processes may take
// during a phase for its round to count as undisturbed.
const calmOthers = 0.1

// othersCores is the CPU other processes took during the phase, in cores.
func (ph *designerPhase) othersCores() float64 {
	return ph.others.Seconds() / ph.res.Elapsed.Seconds()
}

// designerPost posts body to the designer and returns how long the answer
// took and its status.
func designerPost(ctx context.Context, c *http.Client, base, body string) (time.Duration, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/designer/run", strings.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start), resp.StatusCode, err
}

// designerBurst posts n copies of body at once and describes the answers:
// statuses and the slowest.
func designerBurst(c *http.Client, base, body string, n int) string {
	var (
		mu      sync.Mutex
		counts  = map[string]int64{}
		slowest time.Duration
		wg      sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			took, status, err := designerPost(context.Background(), c, base, body)
			mu.Lock()
			defer mu.Unlock()
			counts[outcome(status, err)]++
			slowest = max(slowest, took)
		})
	}
	wg.Wait()
	return fmt.Sprintf("%s, the slowest in %v", formatOutcomes(counts), slowest.Round(time.Millisecond))
}

// designerLoad starts n clients posting body to the designer back to back
// (after a 503's Retry-After); the function it returns stops them, waits
// for their last answers and returns the count of each outcome.
func designerLoad(c *http.Client, base, body string, n int) (stop func() map[string]int64) {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		counts  = map[string]int64{}
		wg      sync.WaitGroup
		stopped atomic.Bool
	)
	for range n {
		wg.Go(func() {
			for !stopped.Load() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/designer/run", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				wait := time.Duration(0)
				status := 0
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
					if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && status == http.StatusServiceUnavailable {
						wait = time.Duration(s) * time.Second
					}
				}
				if stopped.Load() && (errors.Is(err, context.Canceled) || ctx.Err() != nil) {
					return
				}
				mu.Lock()
				counts[outcome(status, err)]++
				mu.Unlock()
				if err != nil {
					wait = 100 * time.Millisecond
				}
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
		})
	}
	return func() map[string]int64 {
		stopped.Store(true)
		// Let the runs in progress finish (each within the designer's
		// timeout), so the next quiet phase is quiet; the sleepers wake.
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		cancel()
		<-done
		return counts
	}
}

func outcome(status int, err error) string {
	if err != nil {
		return "error"
	}
	return strconv.Itoa(status)
}

// formatOutcomes writes counts as "200: 12, 503: 80" in status order.
func formatOutcomes(counts map[string]int64) string {
	if len(counts) == 0 {
		return "-"
	}
	var ks []string
	for k := range counts {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var b strings.Builder
	for i, k := range ks {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %d", k, counts[k])
	}
	return b.String()
}

func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
