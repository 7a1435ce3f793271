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
	if err := os.WriteFile(file, []byte(ConfigYAML(keys, "listen: 127.0.0.1:0\n")), 0o644); err != nil {
		return Target{}, err
	}
	srv, err := StartChild(o.Self, nil, "-serve", file)
	if err != nil {
		return Target{}, fmt.Errorf("sluice server: %w", err)
	}
	defer srv.Stop()
	// The decision API and the designer: on the admin listener when the
	// server has one, else on its only one.
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
			var c0 time.Duration
			ph.res = PacedHooks(o.Conns, o.Rate, serverWarmup/2, o.Time, func(w int) CallFunc {
				return httpCaller(w, conns, host, checkReqs, nil)
			}, Hooks{Begin: func() { c0 = CPUTime(srv.Pid()) }, End: func() { ph.cpu = CPUTime(srv.Pid()) - c0 }})
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
		"start to its end; from schedule = from the time the pacing gave the call (includes a worker falling behind).\n\n",
		ServerKeys, numCPU(), o.Rate, o.Conns, o.Time, o.Rounds, o.Runners, o.Body)
	fmt.Fprintf(w, "That request alone: %v. The finding's request (`%s`): %d in %v; 40 of them at once: %s.\n\n",
		alone.Round(time.Millisecond), DesignerFinding, findingStatus, findingTook.Round(time.Millisecond), burst)
	rows := [][]string{{"round", "phase", "calls/s", "p50 ms", "p99 ms", "p99.9 ms", "p99 from schedule ms", "server CPU (cores)", "designer answers"}}
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
			fmt.Sprintf("%.2f", ph.cpu.Seconds()/ph.res.Elapsed.Seconds()), formatOutcomes(ph.outcomes)})
	}
	WriteTable(w, rows)
	fmt.Fprintln(w)
	q, l := medianDuration(quiet), medianDuration(loaded)
	ratio := float64(l) / float64(q)
	t := Target{Pass: ratio <= TargetDesignerP99Ratio, Text: fmt.Sprintf(
		"decision API p99 with %d designer runs asked at once: %s ms (median of %d rounds) ÷ %s ms without = %.2f× (target ≤ %.0f×)",
		o.Runners, Ms(l), len(loaded), Ms(q), ratio, TargetDesignerP99Ratio)}
	fmt.Fprintf(w, "**%s** %s\n\n", t.Verdict(), t.Text)
	return t, nil
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
