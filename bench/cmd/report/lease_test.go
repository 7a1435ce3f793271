package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLeasePartRunsEveryRunAndJudgesEveryTarget runs the lease part small
// (2 processes × 4 callers, 100 keys, runs of 300 ms, promise runs of 2 s),
// and finds every run's row and every target, the throughput ones for
// each limit: GCRA per second, GCRA per minute, a per-minute window. It
// needs redis-server (make deps installs it). Its speed targets may miss at
// this size; the promise may not be exceeded at any size.
func TestLeasePartRunsEveryRunAndJudgesEveryTarget(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := leaseOptions{procs: 2, callers: 4, keys: 100, d: 300 * time.Millisecond, promiseD: 2 * time.Second, lead: 500 * time.Millisecond,
		halfWarmup: 300 * time.Millisecond, halfD: 300 * time.Millisecond}
	ts, err := runLease(&out, dir, t.TempDir(), o)
	if err != nil {
		t.Fatalf("lease part: %v (it needs redis-server: make deps installs it)\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{
		"| redis_rate ", "| ulule-redis ", "| throttled-redis ",
		"| sluice GCRA 1,000,000/s, lease off ", "| sluice GCRA 1,000,000/s, lease auto ", "| sluice GCRA 1,000,000/s, lease auto, ½ rate ",
		"| sluice GCRA 60,000,000/min, lease off ", "| sluice GCRA 60,000,000/min, lease auto ",
		"| sluice GCRA 60,000,000/min, lease auto, ½ rate ",
		"| sluice window 60,000,000/min, lease off ", "| sluice window 60,000,000/min, lease auto ",
		"| sluice window 60,000,000/min, lease auto, ½ rate ",
		"| global, lease off ", "| global, lease auto ",
		"| steady  | gcra ", "| moving  | fixed-window ", "| kill -9 | leaky-bucket ",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report has no row %q:\n%s", want, report)
		}
	}
	wants := []string{
		"GCRA 1,000,000/s on 100 Zipf keys, 2 processes × 4 callers: sluice lease auto", "GCRA 1,000,000/s: Redis commands per decision",
		"GCRA 1,000,000/s: decision p99 at half",
		"GCRA 60,000,000/min on 100 Zipf keys, 2 processes × 4 callers: sluice lease auto", "GCRA 60,000,000/min: Redis commands per decision",
		"GCRA 60,000,000/min: decision p99 at half",
		"window 60,000,000/min on 100 Zipf keys, 2 processes × 4 callers: sluice lease auto", "window 60,000,000/min: Redis commands per decision",
		"window 60,000,000/min: decision p99 at half",
		"global limit",
		"promise (steady, 2× the limit offered):", "promise (steady, 2× the limit offered over",
		"promise (moving, 2× the limit offered):", "promise (moving, 2× the limit offered over",
		"promise (kill -9, 2× the limit offered):",
	}
	if len(ts) != len(wants) {
		t.Fatalf("%d targets, want %d: %+v", len(ts), len(wants), ts)
	}
	for i, w := range wants {
		if !strings.HasPrefix(ts[i].Text, "Leased quota") || !strings.Contains(ts[i].Text, w) {
			t.Errorf("target %d is %q, want one on %q", i, ts[i].Text, w)
		}
		if strings.HasSuffix(w, "offered):") && !ts[i].Pass {
			t.Errorf("the fleet admitted more than the promise: %s", ts[i].Text)
		}
	}
}
