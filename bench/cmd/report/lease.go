package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/sluice-dev/sluice/bench"
)

// leaseOptions are the lease part's settings (BENCH_LEASE_*).
type leaseOptions struct {
	procs, callers, keys int
	d, promiseD, lead    time.Duration
	halfWarmup, halfD    time.Duration // 0: leasefleet's default
}

func leaseOptionsFromEnv() leaseOptions {
	return leaseOptions{
		procs: envInt("BENCH_LEASE_PROCS", 4), callers: envInt("BENCH_LEASE_CALLERS", 64), keys: envInt("BENCH_LEASE_KEYS", 10_000),
		d: envDur("BENCH_LEASE_TIME", 5*time.Second), promiseD: envDur("BENCH_LEASE_PROMISE", 20*time.Second),
		lead: envDur("BENCH_LEASE_LEAD", 4*time.Second), halfWarmup: envDur("BENCH_LEASE_HALF_WARMUP", 3*time.Second),
		halfD: envDur("BENCH_LEASE_HALF_TIME", 0),
	}
}

// runLease is the lease part: bench/cmd/leasefleet, built into tmp and run
// with o, starting its own redis-server and 3-master Cluster. Its Markdown
// goes to w; its targets' verdicts come back.
func runLease(w io.Writer, dir, tmp string, o leaseOptions) ([]bench.Target, error) {
	bin, targets := filepath.Join(tmp, "leasefleet"), filepath.Join(tmp, "lease-targets.json")
	build := exec.Command("go", "build", "-o", bin, "./cmd/leasefleet")
	build.Dir, build.Stdout, build.Stderr = dir, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building leasefleet: %w", err)
	}
	args := []string{"-procs", fmt.Sprint(o.procs), "-callers", fmt.Sprint(o.callers), "-keys", fmt.Sprint(o.keys),
		"-d", o.d.String(), "-promise-d", o.promiseD.String(), "-lead", o.lead.String(),
		"-half-warmup", o.halfWarmup.String(), "-half-d", o.halfD.String()}
	fmt.Fprintf(w, "## Leased quota: %d processes sharing Redis (`redis.Options.Lease`)\n\n", o.procs)
	fmt.Fprintf(w, "Command: `BENCH_ONLY=lease BENCH_LEASE_PROCS=%d BENCH_LEASE_CALLERS=%d BENCH_LEASE_KEYS=%d BENCH_LEASE_TIME=%v "+
		"BENCH_LEASE_PROMISE=%v make bench`, which runs `go build -o leasefleet ./cmd/leasefleet && leasefleet %s` "+
		"(it starts its own redis-server and 3-master Cluster; the Go code is bench/cmd/leasefleet).\n\n",
		o.procs, o.callers, o.keys, o.d, o.promiseD, shellJoin(args))
	start := time.Now()
	cmd := exec.Command(bin, append(args, "-targets", targets)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, w, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("leasefleet: %w", err)
	}
	b, err := os.ReadFile(targets)
	if err != nil {
		return nil, err
	}
	var ts []bench.Target
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("leasefleet's targets: %w", err)
	}
	fmt.Fprintf(w, "Lease part: %v in all. Load average after it: %s\n\n", time.Since(start).Round(time.Second), bench.LoadAvg())
	return ts, nil
}
