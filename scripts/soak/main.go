// Command soak runs `sluice serve` on a real Redis under steady load for a
// long time and prints what it measured: `make soak` (not part of make test).
//
// It starts redis-server (no persistence, a free loopback port), builds
// ./cmd/sluice and serves a generated configuration on that Redis, then
//
//  1. measures capacity with a short ramp: closed-loop clients at rising
//     concurrency, capacity being the best throughput seen;
//  2. sends an open-loop load at -load (70%) of that capacity for -duration,
//     every request scheduled in advance and its latency measured from its
//     scheduled time (so a stalled server is not hidden by clients that
//     wait for it);
//  3. every -every (10 s) samples the server's heap (go_memstats_heap_inuse_bytes
//     from /metrics), its resident memory and goroutines, and the clients'
//     p50/p99/max latency and outcomes over the interval;
//
// and prints the ramp and the series as Markdown tables, with the store
// errors and fallback decisions of each interval (from /metrics) and the
// machine's load average (it may be shared). The traffic is a
// mix of the proxy (80%, to the demo upstream), the decision API (15%) and
// forward-auth (5%), from -keys distinct API keys plus a few hot keys that
// are refused most of the time.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	duration := flag.Duration("duration", 10*time.Minute, "how long to hold the load (SOAK_DURATION in make soak)")
	every := flag.Duration("every", 10*time.Second, "sampling interval")
	load := flag.Float64("load", 0.7, "share of the measured capacity to hold")
	rampStep := flag.Duration("ramp-step", 5*time.Second, "length of each step of the capacity ramp")
	keys := flag.Int("keys", 10000, "distinct API keys")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *duration, *every, *load, *rampStep, *keys); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, duration, every time.Duration, load float64, rampStep time.Duration, keys int) error {
	dir, err := os.MkdirTemp("", "sluice-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	redisPort, sluicePort := freePort(), freePort()
	redisAddr := "127.0.0.1:" + strconv.Itoa(redisPort)
	redis := exec.Command("redis-server", "--port", strconv.Itoa(redisPort), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	redis.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := redis.Start(); err != nil {
		return fmt.Errorf("starting redis-server (install it: apt-get install redis-server): %w", err)
	}
	defer func() { redis.Process.Kill(); redis.Wait() }()

	bin := filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", bin, "./cmd/sluice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building sluice: %w", err)
	}
	cfgFile := filepath.Join(dir, "sluice.yaml")
	if err := os.WriteFile(cfgFile, []byte(config(sluicePort, redisAddr)), 0o644); err != nil {
		return err
	}
	var serverLog bytes.Buffer
	srv := exec.Command(bin, "serve", "-config", cfgFile)
	srv.Stdout, srv.Stderr = &serverLog, &serverLog
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			srv.Process.Kill()
			<-exited
		}
	}()
	base := "http://127.0.0.1:" + strconv.Itoa(sluicePort)
	if err := waitReady(base, exited); err != nil {
		return fmt.Errorf("%w; server log:\n%s", err, serverLog.String())
	}
	fmt.Printf("sluice serve (pid %d) on %s, Redis %s; %d API keys; %d CPUs\n\n", srv.Process.Pid, base, redisAddr, keys, runtime.NumCPU())

	lg := newLoad(base, keys)
	// 1. Capacity.
	fmt.Println("## Capacity ramp (closed loop)")
	fmt.Println()
	fmt.Println("| clients | requests/s | p50 | p99 | errors | load avg |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	capacity := 0.0
	for _, c := range []int{4, 8, 16, 32, 64, 128} {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w := lg.closedLoop(ctx, c, rampStep)
		rate := float64(w.n) / rampStep.Seconds()
		fmt.Printf("| %d | %.0f | %v | %v | %d | %s |\n", c, rate, w.pct(50), w.pct(99), w.errors, loadavg())
		capacity = max(capacity, rate)
	}
	target := capacity * load
	fmt.Printf("\ncapacity %.0f requests/s; holding %.0f%% = %.0f requests/s for %v, sampling every %v\n\n",
		capacity, 100*load, target, duration, every)

	// 2 and 3. The soak.
	fmt.Println("## Soak (open loop)")
	fmt.Println()
	fmt.Println("| t | sent/s | 2xx | 429 | other | errors | late | p50 | p99 | max | heap in use | RSS | goroutines | store errors | fallbacks | load avg |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	soakCtx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	samples := make(chan *window)
	go lg.openLoop(soakCtx, target, every, samples)
	start := time.Now()
	var heaps []float64
	prev := scrape(base)
	for w := range samples {
		m := scrape(base)
		storeErrors := m["sluice_store_errors_total"] - prev["sluice_store_errors_total"]
		fallbacks := m["sluice_fallback_decisions_total"] - prev["sluice_fallback_decisions_total"]
		prev = m
		heaps = append(heaps, m["go_memstats_heap_inuse_bytes"])
		w.mu.Lock()
		n, ok, limited, other, errs, late := w.n, w.ok, w.limited, w.other, w.errors, w.late
		w.mu.Unlock()
		fmt.Printf("| %s | %.0f | %d | %d | %d | %d | %d | %v | %v | %v | %.1f MB | %.1f MB | %.0f | %.0f | %.0f | %s |\n",
			time.Since(start).Round(time.Second), float64(n)/every.Seconds(), ok, limited, other, errs, late,
			w.pct(50), w.pct(99), w.pct(100), m["go_memstats_heap_inuse_bytes"]/(1<<20),
			m["process_resident_memory_bytes"]/(1<<20), m["go_goroutines"], storeErrors, fallbacks, loadavg())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m := scrape(base)
	fmt.Printf("\nafter the soak: store errors %.0f, fallback decisions %.0f, undecided %.0f, round trips saved by the over-limit cache %.0f\n",
		m["sluice_store_errors_total"], m["sluice_fallback_decisions_total"], m["sluice_undecided_total"],
		m["sluice_overlimit_round_trips_saved_total"])
	if len(heaps) > 0 {
		fmt.Printf("heap in use: first sample %.1f MB, last %.1f MB, highest %.1f MB\n",
			heaps[0]/(1<<20), heaps[len(heaps)-1]/(1<<20), slices.Max(heaps)/(1<<20))
	}
	if info, err := redisInfo(redisAddr); err == nil {
		fmt.Printf("Redis: %s keys, used_memory %s\n", info["db0"], info["used_memory_human"])
	}
	select {
	case err := <-exited:
		return fmt.Errorf("sluice exited during the soak: %v; log:\n%s", err, serverLog.String())
	default:
	}
	if n := strings.Count(serverLog.String(), "level=ERROR"); n > 0 {
		fmt.Printf("server log: %d error lines\n", n)
	}
	return nil
}

// config is the served configuration: Redis store with the production
// defaults, unknown API keys limited by key, a generous plan (so most
// requests pass) and a global limit out of reach.
func config(port int, redis string) string {
	return fmt.Sprintf(`listen: 127.0.0.1:%d
store:
  type: redis
  max_keys: 1000000
  redis: {addresses: ["%s"], timeout: 50ms, on_store_error: local, instances: 1}
identity:
  unknown_keys: key
plans:
  free:
    limits:
      - {name: per-second, algorithm: token-bucket, quantity: 20, window: 1s, burst: 40}
      - {name: per-minute, algorithm: sliding-window-counter, quantity: 600, window: 1m}
      - {name: per-day, algorithm: fixed-window, quantity: 1000000, window: 24h}
    costs: {"POST /api/generate": 5}
default_plan: free
anonymous_plan: free
global:
  - {name: global, algorithm: gcra, quantity: 1000000, window: 1s}
`, port, redis)
}

// load sends the mix of requests.
type load struct {
	base   string
	keys   []string
	client *http.Client
}

func newLoad(base string, keys int) *load {
	l := &load{base: base, client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}}}
	for i := range keys {
		l.keys = append(l.keys, fmt.Sprintf("soak-key-%06d", i))
	}
	return l
}

// request sends one request of the mix and returns its status (0: error).
func (l *load) request(rng *rand.Rand) int {
	key := l.keys[rng.IntN(len(l.keys))]
	if rng.IntN(100) == 0 {
		key = "hot-key-" + strconv.Itoa(rng.IntN(4)) // refused most of the time
	}
	var req *http.Request
	switch p := rng.IntN(100); {
	case p < 80:
		path := "/api/items/" + strconv.Itoa(rng.IntN(1000))
		method := http.MethodGet
		if p < 5 {
			path, method = "/api/generate", http.MethodPost
		}
		req, _ = http.NewRequest(method, l.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
	case p < 95:
		req, _ = http.NewRequest(http.MethodPost, l.base+"/v1/check",
			strings.NewReader(`{"api_key":"`+key+`","method":"GET","path":"/api/search"}`))
	default:
		req, _ = http.NewRequest(http.MethodGet, l.base+"/v1/forward-auth", nil)
		req.Header.Set("X-Forwarded-Uri", "/api/search")
		req.Header.Set("X-API-Key", key)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if req.URL.Path == "/v1/check" && resp.StatusCode == http.StatusOK {
		return http.StatusOK // allowed or not, a decision
	}
	return resp.StatusCode
}

// window is what the clients saw over one interval.
type window struct {
	mu                            sync.Mutex
	n, ok, limited, other, errors int64
	late                          int64 // sent more than 10 ms after their schedule
	lat                           []time.Duration
}

func (w *window) add(status int, lat time.Duration, late bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	switch {
	case status == 0:
		w.errors++
	case status < 300:
		w.ok++
	case status == http.StatusTooManyRequests:
		w.limited++
	default:
		w.other++
	}
	if late {
		w.late++
	}
	w.lat = append(w.lat, lat)
}

// pct returns the p-th percentile latency, rounded for reading.
func (w *window) pct(p int) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lat) == 0 {
		return 0
	}
	slices.Sort(w.lat)
	d := w.lat[min(len(w.lat)-1, len(w.lat)*p/100)]
	return d.Round(10 * time.Microsecond)
}

// closedLoop runs c clients, each sending as soon as its previous request
// is answered, for d.
func (l *load) closedLoop(ctx context.Context, c int, d time.Duration) *window {
	w := &window{}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range c {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				start := time.Now()
				st := l.request(rng)
				if ctx.Err() == nil {
					w.add(st, time.Since(start), false)
				}
			}
		})
	}
	wg.Wait()
	return w
}

// openLoop sends rate requests per second, each at its scheduled time, until
// ctx is done, and reports a window every interval on out (closed at the end).
func (l *load) openLoop(ctx context.Context, rate float64, every time.Duration, out chan<- *window) {
	defer close(out)
	var cur atomic.Pointer[window]
	cur.Store(&window{})
	due := make(chan time.Time, 1<<16)
	var wg sync.WaitGroup
	for i := range 512 { // enough workers that a slow answer does not delay the next send
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			for at := range due {
				late := time.Since(at) > 10*time.Millisecond
				st := l.request(rng)
				cur.Load().add(st, time.Since(at), late)
			}
		})
	}
	go func() {
		defer close(due)
		start := time.Now()
		gap := time.Duration(float64(time.Second) / rate)
		for k := int64(0); ; k++ {
			at := start.Add(time.Duration(k) * gap)
			if wait := time.Until(at); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			} else if ctx.Err() != nil {
				return
			}
			select {
			case due <- at:
			case <-ctx.Done():
				return
			}
		}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
			out <- cur.Swap(&window{}) // adds still under way lock it; pct locks too
		}
	}
}

// scrape reads the server's /metrics into name → value (labels summed).
func scrape(base string) map[string]float64 {
	m := map[string]float64{}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		name := line[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			m[name] += v
		}
	}
	return m
}

func waitReady(base string, exited <-chan error) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("sluice exited at start: %v", err)
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("sluice was not ready within 60 s")
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// redisInfo sends INFO over a plain connection (RESP) and returns its fields.
func redisInfo(addr string) (map[string]string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, "*1\r\n$4\r\nINFO\r\n")
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || len(head) < 2 || head[0] != '$' {
		return nil, fmt.Errorf("INFO: %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	info := map[string]string{}
	for _, line := range strings.Split(string(body), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[k] = v
		}
	}
	return info, nil
}

// loadavg is the machine's one-minute load average (the machine may be
// shared: it says how much else ran).
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
