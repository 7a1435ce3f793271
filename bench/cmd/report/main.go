// Command report runs the bench module's benchmarks and prints sluice's
// in-memory store side by side with the peer libraries: ns/op, B/op and
// allocs/op per -cpu, each peer's time as a multiple of sluice's, heap bytes
// per tracked key at 1,000,000 keys, and whether the performance targets are
// met. `make bench` runs it from the bench directory.
//
// Environment:
//
//	BENCH_TIME    -benchtime per benchmark run (default 500ms)
//	BENCH_ROUNDS  rounds: runs of the whole suite with -count 1, which
//	              interleave the peers in time (default 5)
//	BENCH_CPU     -cpu list (default 1,2)
//	BENCH_KEYS    keys in the heap measurement (default 1000000)
//	BENCH_SKIP_HEAP=1 skips the heap measurement
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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/bench"
)

// The targets of the memory store.
const (
	targetSpeedup  = 3.0 // at -cpu 2, sluice ns/op ≤ fastest peer's ÷ 3
	targetAllocs   = 0   // allocs/op for an existing key
	targetHeapByte = 100 // heap bytes per tracked key at 1M keys
)

func main() {
	heapPeer := flag.String("heap", "", "internal: measure heap bytes per key for one peer and print them")
	heapKeys := flag.Int("keys", envInt("BENCH_KEYS", 1_000_000), "keys for the heap measurement")
	flag.Parse()
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

func run(heapKeys int) error {
	benchtime := envStr("BENCH_TIME", "500ms")
	rounds := envInt("BENCH_ROUNDS", 5)
	cpus := envStr("BENCH_CPU", "1,2")

	dir, err := moduleDir()
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

	build := []string{"go", "test", "-c", "-o", testBin, "."}
	args := []string{"-test.run", "^$", "-test.bench", ".", "-test.benchmem",
		"-test.cpu", cpus, "-test.benchtime", benchtime, "-test.count", "1"}
	fmt.Printf("sluice measured: %s\n\n", sourceVersion(dir))
	fmt.Println("Commands (in bench/):")
	fmt.Println()
	fmt.Printf("    %s\n", strings.Join(build, " "))
	fmt.Printf("    for round in $(seq %d); do bench.test %s; done   # -count 1 per round: rounds interleave the peers in time\n",
		rounds, shellJoin(args))
	if os.Getenv("BENCH_SKIP_HEAP") == "" {
		fmt.Printf("    report -heap <peer> -keys %d   # one fresh process per peer\n", heapKeys)
	}
	fmt.Println()

	cmd := exec.Command(build[0], build[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the benchmarks: %w", err)
	}

	var raw bytes.Buffer
	results := map[key][]result{}
	var order []key
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		fmt.Fprintf(os.Stderr, "report: round %d of %d\n", r, rounds)
		var out bytes.Buffer
		cmd := exec.Command(testBin, args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, io.MultiWriter(&out, os.Stderr), os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("round %d: %w", r, err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			k, res, ok := parseLine(line)
			if !ok {
				continue
			}
			raw.WriteString(line + "\n")
			if _, seen := results[k]; !seen {
				order = append(order, k)
			}
			results[k] = append(results[k], res)
		}
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark results parsed")
	}

	fmt.Printf("## Decision for an existing key (%d rounds, -benchtime %s, %v in all)\n\n",
		rounds, benchtime, time.Since(start).Round(time.Second))
	fmt.Println("65,536 keys, b.RunParallel, one unit per request, limit 10,000/s burst 10,000 for every library (never refused).")
	fmt.Println("best = the fastest round: interference from other processes only ever slows a round down, so the")
	fmt.Println("best round is the closest to the undisturbed cost; median = the middle round; spread = slowest ÷ fastest.")
	fmt.Println("× gcra / × tb = this row's best ns/op ÷ sluice GCRA's / token bucket's at the same -cpu: above 1 means sluice is faster.")
	fmt.Println("B/op, allocs/op, refused/op: the worst round.")
	fmt.Println()
	best, med, worst := map[key]result{}, map[key]result{}, map[key]result{}
	for _, k := range order {
		best[k], med[k], worst[k] = pick(results[k], slices.Min), pick(results[k], median), pick(results[k], slices.Max)
	}
	slices.SortStableFunc(order, func(a, b key) int { return a.cpu - b.cpu })
	rows := [][]string{{"benchmark", "-cpu", "best ns/op", "median ns/op", "spread", "B/op", "allocs/op", "refused/op", "× gcra", "× tb"}}
	for _, k := range order {
		g, tb := best[key{"sluice-gcra", k.cpu}], best[key{"sluice-tokenbucket", k.cpu}]
		rows = append(rows, []string{k.name, strconv.Itoa(k.cpu), fmt.Sprintf("%.1f", best[k].ns), fmt.Sprintf("%.1f", med[k].ns),
			fmt.Sprintf("%.2f", worst[k].ns/best[k].ns), fmt.Sprintf("%.0f", worst[k].bytes), fmt.Sprintf("%.0f", worst[k].allocs),
			fmt.Sprintf("%.4f", worst[k].refused), ratio(best[k].ns, g.ns), ratio(best[k].ns, tb.ns)})
	}
	printTable(rows)
	fmt.Println()

	heap := map[string]float64{}
	if os.Getenv("BENCH_SKIP_HEAP") == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		fmt.Printf("## Heap per tracked key (%d distinct keys, one request each, two GCs, HeapAlloc after − before)\n\n", heapKeys)
		rows := [][]string{{"peer", "bytes/key", "× gcra", "library"}}
		for _, p := range bench.Peers {
			fmt.Fprintf(os.Stderr, "report: heap per key, %s\n", p.Name)
			out, err := exec.Command(self, "-heap", p.Name, "-keys", strconv.Itoa(heapKeys)).Output()
			if err != nil {
				return fmt.Errorf("heap measurement of %s: %w", p.Name, err)
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				return fmt.Errorf("heap measurement of %s: %q: %w", p.Name, out, err)
			}
			heap[p.Name] = v
			rows = append(rows, []string{p.Name, fmt.Sprintf("%.1f", v), ratio(v, heap["sluice-gcra"]), p.Lib})
		}
		printTable(rows)
		fmt.Println()
	}

	printTargets(order, best, med, worst, heap, heapKeys)

	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("Load average at the end: %s (a load above the number of benchmark goroutines means other work shared the CPUs).\n\n",
			strings.Join(strings.Fields(string(b))[:3], " "))
	}
	fmt.Println("## Raw benchmark lines")
	fmt.Println()
	for _, line := range strings.Split(strings.TrimRight(raw.String(), "\n"), "\n") {
		fmt.Println("    " + line)
	}
	return nil
}

func printTargets(order []key, best, med, worst map[key]result, heap map[string]float64, heapKeys int) {
	fmt.Println("## Targets")
	fmt.Println()
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	// Speed at -cpu 2 (or the largest -cpu run).
	cpu := 0
	for _, k := range order {
		cpu = max(cpu, k.cpu)
	}
	fastest := func(m map[key]result) (float64, string) {
		ns, name := math.Inf(1), ""
		for _, k := range order {
			if k.cpu == cpu && !strings.HasPrefix(k.name, "sluice-") && m[k].ns < ns {
				ns, name = m[k].ns, k.name
			}
		}
		return ns, name
	}
	fb, fbName := fastest(best)
	fm, fmName := fastest(med)
	for _, s := range []string{"sluice-gcra", "sluice-tokenbucket"} {
		b, ok := best[key{s, cpu}]
		if !ok || fbName == "" {
			fmt.Printf("- %s speed at -cpu %d: not measured\n", s, cpu)
			continue
		}
		m := med[key{s, cpu}]
		fmt.Printf("- **%s** %s at -cpu %d: best %.1f ns/op; fastest peer %s %.1f ns/op; peer ÷ sluice = %.2f, target ≥ %.0f"+
			" (medians: %.1f vs %s %.1f, %.2f)\n",
			verdict(fb/b.ns >= targetSpeedup), s, cpu, b.ns, fbName, fb, fb/b.ns, targetSpeedup, m.ns, fmName, fm, fm/m.ns)
	}
	for _, s := range []string{"sluice-gcra", "sluice-tokenbucket"} {
		w, cpus := 0.0, []string{}
		for _, k := range order {
			if k.name == s {
				cpus = append(cpus, strconv.Itoa(k.cpu))
				w = max(w, worst[k].allocs)
			}
		}
		fmt.Printf("- **%s** %s allocs/op on an existing key, worst round at -cpu %s: %.0f, target %d\n",
			verdict(len(cpus) > 0 && w <= targetAllocs), s, strings.Join(cpus, ","), w, targetAllocs)
	}
	for _, s := range []string{"sluice-gcra", "sluice-tokenbucket"} {
		v, ok := heap[s]
		if !ok {
			fmt.Printf("- %s heap per key: not measured\n", s)
			continue
		}
		fmt.Printf("- **%s** %s heap per tracked key at %d keys: %.1f bytes, target ≤ %d\n",
			verdict(v <= targetHeapByte), s, heapKeys, v, targetHeapByte)
	}
	fmt.Println()
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
func parseLine(line string) (key, result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkAllow/") {
		return key{}, result{}, false
	}
	name, cpu := strings.TrimPrefix(f[0], "BenchmarkAllow/"), 1
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
		case "refused/op":
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

// printTable prints rows as a Markdown table, the first row as its header;
// columns whose cells (below the header) are all numbers align right.
func printTable(rows [][]string) {
	width := make([]int, len(rows[0]))
	numeric := make([]bool, len(rows[0]))
	for c := range numeric {
		numeric[c] = true
	}
	for r, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
			if _, err := strconv.ParseFloat(cell, 64); r > 0 && err != nil && cell != "-" {
				numeric[c] = false
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for c, cell := range cells {
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell))
			if numeric[c] {
				b.WriteString(" " + pad + cell + " |")
			} else {
				b.WriteString(" " + cell + pad + " |")
			}
		}
		fmt.Println(b.String())
	}
	line(rows[0])
	sep := make([]string, len(width))
	for c, w := range width {
		sep[c] = strings.Repeat("-", w)
		if numeric[c] {
			sep[c] = strings.Repeat("-", w-1) + ":"
		}
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
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
