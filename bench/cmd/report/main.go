// Command report runs the bench module's benchmarks and prints sluice side
// by side with peer libraries, in one run on one machine, with a PASS/MISS
// line per performance target. `make bench` runs it from the bench
// directory. Its parts:
//
//   - memory: the in-memory store against in-process limiters (ns/op, B/op,
//     allocs/op per -cpu; heap bytes per tracked key at 1,000,000 keys);
//   - http: httplimit's middleware against go-chi/httprate and
//     ulule/limiter's stdlib middleware, in process (added ns and allocs per
//     request over the bare handler), with one limit, and with five (sluice:
//     a plan of three and two rules that match; the peers: five middlewares
//     chained);
//   - redis: the Redis store against redis_rate, ulule and throttled on one
//     local redis-server, with redis-benchmark's pipelined ceiling, and the
//     latency of one decision at half of each library's best rate;
//   - server: the sluice server in its own process under HTTP and gRPC load
//     (decision API, forward-auth, reverse proxy against a bare
//     httputil.ReverseProxy, Envoy RLS), on memory and on Redis;
//   - lease: the leased quota (bench/cmd/leasefleet): a fleet of processes
//     on its own redis-server, sluice with leases off and auto against the
//     Redis peers on Zipf keys, one global limit on its own 3-master
//     Cluster, and the promise counted from outside the store (steady,
//     moving between processes, a process killed with SIGKILL).
//
// Environment:
//
//	BENCH_ONLY        comma-separated parts to run: memory,http,redis,server,lease
//	                  (default all)
//	BENCH_PROFILE     a directory: CPU profiles of the Redis clients and of
//	                  the server under each load are written there
//
//	BENCH_TIME        memory: -benchtime per benchmark run (default 300ms)
//	BENCH_ROUNDS      memory: rounds, runs of the whole suite with -count 1,
//	                  which interleave the peers in time (default 8: the
//	                  machine's disturbed phases last minutes, and a row
//	                  needs one quiet round for its best to be its cost)
//	BENCH_CPU         memory: -cpu list (default 1,2)
//	BENCH_KEYS        memory: keys in the heap measurement (default 1000000)
//	BENCH_SKIP_HEAP=1 memory: skips the heap measurement
//	BENCH_HTTP_TIME   http: -benchtime (default 300ms)
//	BENCH_HTTP_ROUNDS http: rounds (default 5)
//	BENCH_REDIS_TIME  redis: measurement per library per round (default 2s)
//	BENCH_REDIS_ROUNDS redis: rounds (default 3)
//	BENCH_REDIS_PACED redis: paced latency run per library (default 4s)
//	BENCH_LOAD_TIME   server: full-load run per scenario (default 4s)
//	BENCH_LOAD_ROUNDS server: full-load rounds, interleaved; the best is kept (default 2)
//	BENCH_LOAD_PACED  server: half-load run per scenario (default 4s)
//	BENCH_LOAD_CONNS  server: HTTP connections of the load generator (default 64)
//	BENCH_LOAD_PROCS  server: GOMAXPROCS of the load generator while it
//	                  generates load (default: unchanged, one per core)
//	BENCH_LOAD_ROWS   server: a regular expression; only the rows whose
//	                  "<scenario> on <store>" it matches run, e.g.
//	                  'decision API \(POST.* on memory' (default all rows)
//	BENCH_LEASE_PROCS   lease: processes of the fleet (default 4)
//	BENCH_LEASE_CALLERS lease: goroutines per process (default 64)
//	BENCH_LEASE_KEYS    lease: keys of the throughput runs, Zipf(1.1) (default 10000)
//	BENCH_LEASE_TIME    lease: measurement per throughput and global run,
//	                    after 300 ms of warm-up (default 5s)
//	BENCH_LEASE_HALF_WARMUP lease: warm-up of the ½-rate runs, long enough
//	                    for each process to have seen the keys (default 3s)
//	BENCH_LEASE_HALF_TIME lease: measurement per ½-rate run (default: the
//	                    measurement of the other runs, but at least one
//	                    whole window of the run's limit and 2 s more)
//	BENCH_LEASE_PROMISE lease: each promise run, whole seconds (default 20s:
//	                    a bucket's burst held back by B/4 costs 1.2% of
//	                    the promise over 20 s, 1.9% over 12 s)
//	BENCH_LEASE_LEAD    lease: how long before a run's start its processes
//	                    are launched (default 4s)
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-dev/sluice/bench"
)

// The targets of the memory store.
const (
	targetSpeedup  = 2.5 // one check at -cpu 2: sluice ns/op ≤ fastest peer's ÷ 2.5
	targetPlan     = 3.0 // a plan of three limits at -cpu 2: sluice ≤ the fastest peer's three checks ÷ 3
	targetAllocs   = 0   // allocs/op for an existing key
	targetHeapByte = 100 // heap bytes per tracked key at 1M keys
)

func main() {
	heapPeer := flag.String("heap", "", "internal: measure heap bytes per key for one peer and print them")
	heapKeys := flag.Int("keys", envInt("BENCH_KEYS", 1_000_000), "keys for the heap measurement")
	serve := flag.String("serve", "", "internal: run the sluice server for this configuration file")
	upstream := flag.Bool("upstream", false, "internal: run the upstream of the proxy benchmarks")
	bareProxy := flag.String("bareproxy", "", "internal: run a bare httputil.ReverseProxy to this upstream URL")
	idle := flag.Int("idle", 0, "internal: with -bareproxy, idle connections per host of its Transport (0: the default Transport)")
	flag.Parse()
	switch {
	case *serve != "":
		if err := bench.ServeSluice(*serve); err != nil {
			fatalf("serve: %v", err)
		}
		return
	case *upstream:
		if err := bench.ServeUpstream(); err != nil {
			fatalf("upstream: %v", err)
		}
		return
	case *bareProxy != "":
		if err := bench.ServeBareProxy(*bareProxy, *idle); err != nil {
			fatalf("bare proxy: %v", err)
		}
		return
	}
	if *heapPeer != "" {
		p, ok := bench.PeerByName(*heapPeer)
		if !ok {
			fatalf("unknown peer %q", *heapPeer)
		}
		fmt.Printf("%.2f\n", bench.HeapPerKey(p, *heapKeys))
		return
	}
	if err := run(*heapKeys); err != nil {
		fatalf("%v", err)
	}
}

// parts are the report's parts, in the order they run.
var parts = []string{"memory", "http", "redis", "server", "lease"}

func run(heapKeys int) error {
	only := map[string]bool{}
	for _, p := range strings.Split(envStr("BENCH_ONLY", strings.Join(parts, ",")), ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(parts, p) {
			return fmt.Errorf("BENCH_ONLY: unknown part %q (parts: %s)", p, strings.Join(parts, ","))
		}
		only[p] = true
	}
	profile := os.Getenv("BENCH_PROFILE")
	if profile != "" {
		if err := os.MkdirAll(profile, 0o755); err != nil {
			return err
		}
		if profile, err := filepath.Abs(profile); err == nil {
			os.Setenv("BENCH_PROFILE", profile)
		}
		profile = os.Getenv("BENCH_PROFILE")
	}

	dir, err := moduleDir()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "sluice-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	testBin := filepath.Join(tmp, "bench.test")

	fmt.Println("# sluice benchmarks")
	fmt.Println()
	printMachine()
	fmt.Printf("sluice measured: %s\n\n", sourceVersion(dir))
	var chosen []string
	for _, p := range parts {
		if only[p] {
			chosen = append(chosen, p)
		}
	}
	fmt.Printf("Parts run: %s (BENCH_ONLY=%s).\n\n", strings.Join(chosen, ", "), strings.Join(chosen, ","))
	begin := time.Now()

	build := []string{"go", "test", "-c", "-o", testBin, "."}
	if only["memory"] || only["http"] {
		cmd := exec.Command(build[0], build[1:]...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the benchmarks: %w", err)
		}
	}

	var targets []bench.Target
	var raw []string
	if only["memory"] {
		t, r, err := runMemory(dir, testBin, build, heapKeys, self)
		if err != nil {
			return err
		}
		targets, raw = append(targets, t...), append(raw, r...)
	}
	if only["http"] {
		t, r, err := runHTTP(dir, testBin, build)
		if err != nil {
			return err
		}
		targets, raw = append(targets, t...), append(raw, r...)
	}
	if only["redis"] {
		o := bench.RedisOptions{Rounds: envInt("BENCH_REDIS_ROUNDS", 3), Time: envDur("BENCH_REDIS_TIME", 2*time.Second),
			Paced: envDur("BENCH_REDIS_PACED", 4*time.Second), SluiceDir: filepath.Dir(dir), Profile: profile}
		fmt.Printf("Command: `BENCH_ONLY=redis BENCH_REDIS_ROUNDS=%d BENCH_REDIS_TIME=%v BENCH_REDIS_PACED=%v make bench` "+
			"(the Go code is bench/redisbench.go and bench/redispeers.go).\n\n", o.Rounds, o.Time, o.Paced)
		t, err := bench.RunRedis(os.Stdout, o)
		if err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		targets = append(targets, t...)
		fmt.Printf("Load average after the Redis part: %s\n\n", bench.LoadAvg())
	}
	if only["server"] {
		o := bench.ServerOptions{Self: self, Conns: envInt("BENCH_LOAD_CONNS", 64), Time: envDur("BENCH_LOAD_TIME", 4*time.Second),
			Paced: envDur("BENCH_LOAD_PACED", 4*time.Second), Rounds: envInt("BENCH_LOAD_ROUNDS", 2), Profile: profile,
			GenProcs: envInt("BENCH_LOAD_PROCS", 0)}
		if rows := os.Getenv("BENCH_LOAD_ROWS"); rows != "" {
			re, err := regexp.Compile(rows)
			if err != nil {
				return fmt.Errorf("BENCH_LOAD_ROWS: %w", err)
			}
			o.Rows = re
		}
		rows := ""
		if o.Rows != nil {
			rows = fmt.Sprintf(" BENCH_LOAD_ROWS='%s'", o.Rows)
		}
		fmt.Printf("Command: `BENCH_ONLY=server BENCH_LOAD_ROUNDS=%d BENCH_LOAD_CONNS=%d BENCH_LOAD_TIME=%v BENCH_LOAD_PACED=%v%s make bench` "+
			"(the Go code is bench/serverbench.go).\n\n", o.Rounds, o.Conns, o.Time, o.Paced, rows)
		t, err := bench.RunServer(os.Stdout, o)
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		targets = append(targets, t...)
		fmt.Printf("Load average after the server part: %s\n\n", bench.LoadAvg())
	}
	if only["lease"] {
		t, err := runLease(os.Stdout, dir, tmp, leaseOptionsFromEnv())
		if err != nil {
			return fmt.Errorf("lease: %w", err)
		}
		targets = append(targets, t...)
	}

	fmt.Println("## Targets")
	fmt.Println()
	for _, t := range targets {
		fmt.Printf("- **%s** %s\n", t.Verdict(), t.Text)
	}
	fmt.Println()
	fmt.Printf("Total time: %v. Load average at the end: %s (a load above the number of benchmark goroutines means other work shared the CPUs).\n\n",
		time.Since(begin).Round(time.Second), bench.LoadAvg())
	if len(raw) > 0 {
		fmt.Println("## Raw benchmark lines")
		fmt.Println()
		for _, line := range raw {
			fmt.Println("    " + line)
		}
	}
	return nil
}

// runBenchRounds runs the test binary rounds times with args and returns the
// result lines of the benchmark called prefix, parsed, in order.
func runBenchRounds(dir, testBin string, rounds int, args []string, prefix, label string) (map[key][]result, []key, []string, error) {
	results := map[key][]result{}
	var order []key
	var raw []string
	for r := 1; r <= rounds; r++ {
		fmt.Fprintf(os.Stderr, "report: %s round %d of %d\n", label, r, rounds)
		var out bytes.Buffer
		cmd := exec.Command(testBin, args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, io.MultiWriter(&out, os.Stderr), os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, nil, nil, fmt.Errorf("%s round %d: %w", label, r, err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			k, res, ok := parseLine(line, prefix)
			if !ok {
				continue
			}
			raw = append(raw, line)
			if _, seen := results[k]; !seen {
				order = append(order, k)
			}
			results[k] = append(results[k], res)
		}
	}
	if len(order) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no benchmark results parsed", label)
	}
	return results, order, raw, nil
}

// runMemory is the memory part: BenchmarkAllow in rounds, then the heap
// per key in one fresh process per peer.
func runMemory(dir, testBin string, build []string, heapKeys int, self string) ([]bench.Target, []string, error) {
	benchtime := envStr("BENCH_TIME", "300ms")
	rounds := envInt("BENCH_ROUNDS", 8)
	cpus := envStr("BENCH_CPU", "1,2")
	args := []string{"-test.run", "^$", "-test.bench", "^BenchmarkAllow$", "-test.benchmem",
		"-test.cpu", cpus, "-test.benchtime", benchtime, "-test.count", "1"}
	fmt.Println("Commands of the memory part (in bench/):")
	fmt.Println()
	fmt.Printf("    %s\n", strings.Join(build, " "))
	fmt.Printf("    for round in $(seq %d); do bench.test %s; done   # -count 1 per round: rounds interleave the peers in time\n",
		rounds, shellJoin(args))
	if os.Getenv("BENCH_SKIP_HEAP") == "" {
		fmt.Printf("    report -heap <peer> -keys %d   # one fresh process per peer\n", heapKeys)
	}
	fmt.Println()

	start := time.Now()
	results, order, raw, err := runBenchRounds(dir, testBin, rounds, args, "BenchmarkAllow/", "memory")
	if err != nil {
		return nil, nil, err
	}

	fmt.Printf("## Memory store: decision for an existing key (%d rounds, -benchtime %s, %v in all)\n\n",
		rounds, benchtime, time.Since(start).Round(time.Second))
	fmt.Println("65,536 keys, b.RunParallel, one unit per request, limit 10,000/s burst 10,000 for every library (never refused).")
	fmt.Println("best = the fastest round: interference from other processes only ever slows a round down, so the")
	fmt.Println("best round is the closest to the undisturbed cost; median = the middle round; spread = slowest ÷ fastest.")
	fmt.Println("× gcra / × tb = this row's best ns/op ÷ sluice GCRA's / token bucket's at the same -cpu (a plan3- row: sluice's plan3- rows):")
	fmt.Println("above 1 means sluice is faster. plan3- rows decide a plan of three limits (per second, minute, day) per request:")
	fmt.Println("sluice in one atomic Limiter.Allow call, every other library with three limiters of its own checked in turn.")
	fmt.Println("B/op, allocs/op, refused/op: the worst round.")
	fmt.Println("floor = no library: the least work any keyed limiter must do per decision, in the same loop (bench/floor_test.go):")
	fmt.Println("hash the key's bytes once, read the time a ticker refreshes every millisecond (one atomic load, as sluice's memory")
	fmt.Println("store does by default; a clock read costs ~25 ns here), find its 16-byte state (fingerprint + GCRA time) in a table at")
	fmt.Println("load ½ built for these 65,536 keys only, one compare-and-swap; no eviction, expiry, statuses or second limit.")
	fmt.Println("floor-locked = the floor with what a store that spends several limits in one atomic call must add: a two-word")
	fmt.Println("state (no single compare-and-swap covers it) behind a lock in the entry's cache line (compare-and-swap, then a store),")
	fmt.Println("in 32-byte slots.")
	fmt.Println()
	best, med, worst := map[key]result{}, map[key]result{}, map[key]result{}
	for _, k := range order {
		best[k], med[k], worst[k] = pick(results[k], slices.Min), pick(results[k], median), pick(results[k], slices.Max)
	}
	slices.SortStableFunc(order, func(a, b key) int { return a.cpu - b.cpu })
	rows := [][]string{{"benchmark", "-cpu", "best ns/op", "median ns/op", "spread", "B/op", "allocs/op", "refused/op", "× gcra", "× tb"}}
	for _, k := range order {
		plan := "" // a plan row is compared with sluice's plan rows
		if strings.HasPrefix(k.name, "plan3-") {
			plan = "plan3-"
		}
		g, tb := best[key{plan + "sluice-gcra", k.cpu}], best[key{plan + "sluice-tokenbucket", k.cpu}]
		rows = append(rows, []string{k.name, strconv.Itoa(k.cpu), fmt.Sprintf("%.1f", best[k].ns), fmt.Sprintf("%.1f", med[k].ns),
			fmt.Sprintf("%.2f", worst[k].ns/best[k].ns), fmt.Sprintf("%.0f", worst[k].bytes), fmt.Sprintf("%.0f", worst[k].allocs),
			fmt.Sprintf("%.4f", worst[k].refused), ratio(best[k].ns, g.ns), ratio(best[k].ns, tb.ns)})
	}
	bench.WriteTable(os.Stdout, rows)
	fmt.Println()

	heap := map[string]float64{}
	if os.Getenv("BENCH_SKIP_HEAP") == "" {
		fmt.Printf("## Memory store: heap per tracked key (%d distinct keys, one request each, two GCs, HeapAlloc after − before)\n\n", heapKeys)
		rows := [][]string{{"peer", "bytes/key", "× gcra", "library"}}
		for _, p := range bench.Peers {
			fmt.Fprintf(os.Stderr, "report: heap per key, %s\n", p.Name)
			out, err := exec.Command(self, "-heap", p.Name, "-keys", strconv.Itoa(heapKeys)).Output()
			if err != nil {
				return nil, nil, fmt.Errorf("heap measurement of %s: %w", p.Name, err)
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				return nil, nil, fmt.Errorf("heap measurement of %s: %q: %w", p.Name, out, err)
			}
			heap[p.Name] = v
			rows = append(rows, []string{p.Name, fmt.Sprintf("%.1f", v), ratio(v, heap["sluice-gcra"]), p.Lib})
		}
		bench.WriteTable(os.Stdout, rows)
		fmt.Println()
	}
	fmt.Printf("Load average after the memory part: %s\n\n", bench.LoadAvg())
	return memoryTargets(order, best, med, worst, heap, heapKeys), raw, nil
}

func memoryTargets(order []key, best, med, worst map[key]result, heap map[string]float64, heapKeys int) []bench.Target {
	var ts []bench.Target
	add := func(pass bool, format string, args ...any) {
		ts = append(ts, bench.Target{Pass: pass, Text: fmt.Sprintf(format, args...)})
	}
	// Speed at -cpu 2 (or the largest -cpu run).
	cpu := 0
	for _, k := range order {
		cpu = max(cpu, k.cpu)
	}
	// fastest returns the fastest peer row (no sluice, no floor) with
	// prefix ("" for one check, "plan3-" for a plan).
	fastest := func(m map[key]result, prefix string) (float64, string) {
		ns, name := math.Inf(1), ""
		for _, k := range order {
			bare, ok := strings.CutPrefix(k.name, prefix)
			if !ok || prefix == "" && strings.HasPrefix(k.name, "plan3-") {
				continue
			}
			if k.cpu == cpu && !strings.HasPrefix(bare, "sluice-") && !strings.HasPrefix(bare, "floor") && m[k].ns < ns {
				ns, name = m[k].ns, k.name
			}
		}
		return ns, name
	}
	for _, part := range []struct {
		prefix, what string
		target       float64
	}{{"", "one check", targetSpeedup}, {"plan3-", "a plan of 3 limits", targetPlan}} {
		fb, fbName := fastest(best, part.prefix)
		fm, fmName := fastest(med, part.prefix)
		for _, s := range []string{"sluice-gcra", "sluice-tokenbucket"} {
			s = part.prefix + s
			b, ok := best[key{s, cpu}]
			if !ok || fbName == "" {
				add(false, "Memory: %s speed at -cpu %d: not measured", s, cpu)
				continue
			}
			m := med[key{s, cpu}]
			note := ""
			if part.prefix == "" {
				note = floorNote(best, med, cpu, fb, fm)
			}
			add(fb/b.ns >= part.target, "Memory, %s: %s (Limiter.Allow) at -cpu %d: best %.1f ns/op; fastest peer %s %.1f ns/op; peer ÷ sluice = %.2f, target ≥ %.1f"+
				" (medians: %.1f vs %s %.1f, %.2f)%s", part.what, s, cpu, b.ns, fbName, fb, fb/b.ns, part.target, m.ns, fmName, fm, fm/m.ns, note)
		}
	}
	for _, s := range []string{"sluice-gcra", "sluice-tokenbucket", "plan3-sluice-gcra", "plan3-sluice-tokenbucket"} {
		w, cpus := 0.0, []string{}
		for _, k := range order {
			if k.name == s {
				cpus = append(cpus, strconv.Itoa(k.cpu))
				w = max(w, worst[k].allocs)
			}
		}
		add(len(cpus) > 0 && w <= targetAllocs, "Memory: %s allocs/op on an existing key, worst round at -cpu %s: %.0f, target %d",
			s, strings.Join(cpus, ","), w, targetAllocs)
	}
	for _, s := range []string{"sluice-gcra", "sluice-tokenbucket"} {
		v, ok := heap[s]
		if !ok {
			continue
		}
		add(v <= targetHeapByte, "Memory: %s heap per tracked key at %d keys: %.1f bytes, target ≤ %d", s, heapKeys, v, targetHeapByte)
	}
	return ts
}

// floorNote compares the speed target with the floor sub-benchmark, the
// least work any keyed limiter does per decision: a target ns/op (the fastest
// peer's ÷ targetSpeedup) below the floor's cannot be met by any limiter on
// this machine.
func floorNote(best, med map[key]result, cpu int, fastestBest, fastestMed float64) string {
	fb, okb := best[key{"floor", cpu}]
	fm, okm := med[key{"floor", cpu}]
	if !okb || !okm {
		return ""
	}
	verdict := func(target, floor float64) string {
		if target < floor {
			return "below the floor"
		}
		return "above the floor"
	}
	note := fmt.Sprintf("; the target is ≤ %.1f ns/op (best) and ≤ %.1f ns/op (medians), the floor is %.1f (best) and %.1f (median): %s, %s",
		fastestBest/targetSpeedup, fastestMed/targetSpeedup, fb.ns, fm.ns,
		verdict(fastestBest/targetSpeedup, fb.ns), verdict(fastestMed/targetSpeedup, fm.ns))
	if lb, ok := best[key{"floor-locked", cpu}]; ok {
		lm := med[key{"floor-locked", cpu}]
		note += fmt.Sprintf("; floor-locked is %.1f (best) and %.1f (median): %s, %s",
			lb.ns, lm.ns, verdict(fastestBest/targetSpeedup, lb.ns), verdict(fastestMed/targetSpeedup, lm.ns))
	}
	return note
}

// The middleware targets.
const (
	targetMiddlewareNs     = 1000 // added ns per request
	targetMiddlewareAllocs = 3    // added allocs per request
	targetMiddlewareShare  = 0.5  // sluice's added ns ÷ the cheapest peer's
	targetRulesNs          = 1500 // added ns per request, a plan of 3 limits and 2 matching rules
	targetRulesAllocs      = 3    // added allocs per request, the same
)

// runHTTP is the middleware part: BenchmarkMiddleware in rounds at -cpu 1.
func runHTTP(dir, testBin string, build []string) ([]bench.Target, []string, error) {
	benchtime := envStr("BENCH_HTTP_TIME", "300ms")
	rounds := envInt("BENCH_HTTP_ROUNDS", 5)
	args := []string{"-test.run", "^$", "-test.bench", "^BenchmarkMiddleware$", "-test.benchmem",
		"-test.cpu", "1", "-test.benchtime", benchtime, "-test.count", "1"}
	start := time.Now()
	results, order, raw, err := runBenchRounds(dir, testBin, rounds, args, "BenchmarkMiddleware/", "http")
	if err != nil {
		return nil, nil, err
	}
	fmt.Printf("## HTTP middleware overhead (%d rounds, -benchtime %s, -cpu 1, %v in all)\n\n", rounds, benchtime,
		time.Since(start).Round(time.Second))
	fmt.Println("Commands (in bench/):")
	fmt.Println()
	fmt.Printf("    %s\n", strings.Join(build, " "))
	fmt.Printf("    for round in $(seq %d); do bench.test %s; done\n\n", rounds, shellJoin(args))
	fmt.Printf("One GET request through each middleware in process (bench/http_test.go): no httptest, no network; one prebuilt "+
		"request whose API key header value is replaced before each request, walking %d keys (header %s, every key warmed "+
		"first; every request also carries %s: acme, which the 5-limit rows key one limit by), and a reusable ResponseWriter; the wrapped handler writes a 200 and 3 bytes without allocating. "+
		"added = this row's best ns/op (worst allocs/op) minus the bare handler's. non-200/op must be 0 (every request admitted).\n\n", 10_000, bench.APIKeyHeader, bench.TenantHeader)
	best, med, worst := map[string]result{}, map[string]result{}, map[string]result{}
	for _, k := range order {
		best[k.name], med[k.name], worst[k.name] = pick(results[k], slices.Min), pick(results[k], median), pick(results[k], slices.Max)
	}
	bare := best["bare"]
	bareAllocs := worst["bare"].allocs
	rows := [][]string{{"middleware", "best ns/op", "median ns/op", "added ns", "B/op", "allocs/op", "added allocs", "non-200/op"}}
	for _, k := range order {
		n := k.name
		rows = append(rows, []string{n, fmt.Sprintf("%.1f", best[n].ns), fmt.Sprintf("%.1f", med[n].ns),
			fmt.Sprintf("%.1f", best[n].ns-bare.ns), fmt.Sprintf("%.0f", worst[n].bytes), fmt.Sprintf("%.0f", worst[n].allocs),
			fmt.Sprintf("%.0f", worst[n].allocs-bareAllocs), fmt.Sprintf("%.4f", worst[n].refused)})
	}
	bench.WriteTable(os.Stdout, rows)
	fmt.Println()
	for _, p := range bench.HTTPPeers {
		fmt.Printf("- `%s`: %s\n", p.Name, p.Lib)
	}
	fmt.Println()

	var ts []bench.Target
	cheapest, cheapName := math.Inf(1), ""
	for _, n := range []string{"httprate", "ulule"} {
		if r, ok := best[n]; ok && r.ns-bare.ns < cheapest {
			cheapest, cheapName = r.ns-bare.ns, n
		}
	}
	s, ok := best["sluice-3limits"]
	one, ok1 := best["sluice-1limit"]
	if !ok || !ok1 {
		return nil, raw, fmt.Errorf("http: sluice-3limits or sluice-1limit not measured")
	}
	added, addedAllocs := s.ns-bare.ns, worst["sluice-3limits"].allocs-bareAllocs
	added1 := one.ns - bare.ns
	// The share is judged on equal work: the peers enforce one limit per
	// request, so sluice's row with one limit is the one set beside them;
	// the 3-limit plan (three decisions in one call) is given for reference.
	ts = append(ts,
		bench.Target{Pass: added <= targetMiddlewareNs, Text: fmt.Sprintf(
			"HTTP middleware: sluice (3 limits) adds %.0f ns per request (median round %.0f), target ≤ %d ns",
			added, med["sluice-3limits"].ns-med["bare"].ns, targetMiddlewareNs)},
		bench.Target{Pass: addedAllocs <= targetMiddlewareAllocs, Text: fmt.Sprintf(
			"HTTP middleware: sluice (3 limits) adds %.0f allocs per request, target ≤ %d", addedAllocs, targetMiddlewareAllocs)},
		bench.Target{Pass: added1 <= targetMiddlewareShare*cheapest, Text: fmt.Sprintf(
			"HTTP middleware, equal work (1 limit each): sluice's added %.0f ns ÷ cheapest peer's (%s) %.0f ns = %.2f, target ≤ %.1f "+
				"(median rounds: %.2f; sluice with its 3-limit plan: %.0f ns, %.2f)",
			added1, cheapName, cheapest, added1/cheapest, targetMiddlewareShare,
			(med["sluice-1limit"].ns-med["bare"].ns)/(med[cheapName].ns-med["bare"].ns), added, added/cheapest)})
	rules, ok := best["sluice-3limits+2rules"]
	if !ok {
		return nil, raw, fmt.Errorf("http: sluice-3limits+2rules not measured")
	}
	addedRules, addedRulesAllocs := rules.ns-bare.ns, worst["sluice-3limits+2rules"].allocs-bareAllocs
	var peers5 []string
	for _, n := range []string{"httprate-5limits", "ulule-5limits"} {
		if r, ok := best[n]; ok {
			peers5 = append(peers5, fmt.Sprintf("%s adds %.0f ns and %.0f allocs", n, r.ns-bare.ns, worst[n].allocs-bareAllocs))
		}
	}
	ts = append(ts,
		bench.Target{Pass: addedRules <= targetRulesNs, Text: fmt.Sprintf(
			"HTTP middleware, rules: sluice (a plan of 3 limits and 2 matching rules, 5 limits) adds %.0f ns per request (median round %.0f), target ≤ %d ns; "+
				"with 5 limits each, %s",
			addedRules, med["sluice-3limits+2rules"].ns-med["bare"].ns, targetRulesNs, strings.Join(peers5, ", "))},
		bench.Target{Pass: addedRulesAllocs <= targetRulesAllocs, Text: fmt.Sprintf(
			"HTTP middleware, rules: sluice (3 limits and 2 rules) adds %.0f allocs per request, target ≤ %d", addedRulesAllocs, targetRulesAllocs)})
	return ts, raw, nil
}

// key identifies one benchmark at one -cpu.
type key struct {
	name string
	cpu  int
}

type result struct {
	ns, bytes, allocs, refused float64
}

// parseLine parses one `go test -bench` result line such as
//
//	BenchmarkAllow/sluice-gcra-2  1303062  336.4 ns/op  0 refused/op  0 B/op  0 allocs/op
func parseLine(line, prefix string) (key, result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], prefix) {
		return key{}, result{}, false
	}
	name, cpu := strings.TrimPrefix(f[0], prefix), 1
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil {
			name, cpu = name[:i], n
		}
	}
	var r result
	seen := false
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return key{}, result{}, false
		}
		switch f[i+1] {
		case "ns/op":
			r.ns, seen = v, true
		case "B/op":
			r.bytes = v
		case "allocs/op":
			r.allocs = v
		case "refused/op", "non-200/op":
			r.refused = v
		}
	}
	return key{name, cpu}, r, seen
}

// pick applies agg to each field of rs separately.
func pick(rs []result, agg func([]float64) float64) result {
	field := func(get func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		return agg(v)
	}
	return result{
		ns:      field(func(r result) float64 { return r.ns }),
		bytes:   field(func(r result) float64 { return r.bytes }),
		allocs:  field(func(r result) float64 { return r.allocs }),
		refused: field(func(r result) float64 { return r.refused }),
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func printMachine() {
	fmt.Println("Machine:")
	fmt.Println()
	fmt.Printf("    cpu: %s\n", cpuModel())
	fmt.Printf("    runtime.NumCPU: %d, GOOS/GOARCH: %s/%s, Go: %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Printf("    date: %s\n", time.Now().UTC().Format(time.RFC3339))
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("    load average at start: %s\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
	fmt.Println()
}

// sourceVersion names the commit of the sluice tree being measured (the
// parent of the bench module) and says whether its files differ from it.
func sourceVersion(benchDir string) string {
	root := filepath.Dir(benchDir)
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	v := "commit " + strings.TrimSpace(string(out))
	st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench").Output()
	if err == nil && len(bytes.TrimSpace(st)) > 0 {
		v += " with uncommitted changes"
	}
	return v
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// moduleDir returns the bench module's directory: the working directory,
// which `make bench` sets, or its bench/ subdirectory.
func moduleDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for _, d := range []string{wd, filepath.Join(wd, "bench")} {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/sluice-dev/sluice/bench\n")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("run report from the bench module (cd bench && go run ./cmd/report)")
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$ *?") {
			a = "'" + a + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

func envStr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDur(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			fatalf("%s=%q: want a positive duration such as 2s", name, v)
		}
		return d
	}
	return def
}

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fatalf("%s=%q: want a positive integer", name, v)
		}
		return n
	}
	return def
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "report: "+format+"\n", args...)
	os.Exit(1)
}
