package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sim"
)

// runSluice runs the command line and returns its exit code and outputs.
func runSluice(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSimulateBoundaryBurstTable(t *testing.T) {
	code, out, errOut := runSluice(t, "simulate", "-pattern", "boundary-burst", "-limit", "100/1m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"pattern boundary-burst: 1 key, 1000 requests over 10m; limit 100/1m per key",
		"worst 1m", "200/100", "+100%", "sliding-window-log", "1.6 KiB max"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines != 8 {
		t.Errorf("%d lines, want a heading, a header and 6 rows:\n%s", lines, out)
	}
}

// A monthly quota is replayed through the calendar month: the table has
// the worst month beside the worst 31 days.
func TestSimulateCalendarQuotaTable(t *testing.T) {
	code, out, errOut := runSluice(t, "simulate", "-pattern", "boundary-burst", "-limit", "100/month", "-algorithms", "fixed-window,sliding-window-log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"limit 100/month per key; reference sliding-window-log 100/31d", "worst month worst 31d",
		"fixed-window (month) 1000 0 100/100 200/100 +100%", "sliding-window-log 500 500 100/100 100/100 none"} {
		if !strings.Contains(rows, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateJSONAndCharts(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.png", "out.svg"} {
		file := filepath.Join(dir, name)
		code, out, errOut := runSluice(t, "simulate", "-pattern", "many-keys", "-keys", "50", "-algorithms", "gcra,fixed-window",
			"-limit", "10/1s", "-duration", "30s", "-seed", "3", "-format", "json", "-chart", file)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var res sim.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if len(res.Algorithms) != 2 || res.Algorithms[0].Label != "gcra" || res.Keys != 50 || res.Chart != nil {
			t.Fatalf("result %+v", res)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if name == "out.png" {
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				t.Errorf("chart is not a PNG: %v", err)
			}
		} else if !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte(">fixed-window</text>")) {
			t.Errorf("chart is not an SVG with a legend")
		}
		if !strings.Contains(errOut, "chart written to "+file) {
			t.Errorf("stderr %q", errOut)
		}
	}
}

func TestSimulateTraceErrorsNameFileAndLine(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "requests.csv")
	os.WriteFile(trace, []byte("time,key,cost\n0,a,1\n0.5,a,lots\n1,b,1\n"), 0o644)
	code, _, errOut := runSluice(t, "simulate", "-trace", trace, "-limit", "1/1s")
	if code != 1 || !strings.Contains(errOut, trace+`: line 3: cost "lots" must be an integer`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := runSluice(t, "simulate", "-trace", trace, "-limit", "1/1s", "-skip-bad-lines")
	if code != 0 || !strings.Contains(errOut, "requests.csv: line 3:") || !strings.Contains(errOut, "(skipped)") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "trace requests.csv: 2 keys, 2 requests") {
		t.Errorf("table:\n%s", out)
	}
}

// The count after the first 20 skipped lines counts every line skipped,
// those beyond the ones the trace reader lists included.
func TestSimulateCountsEverySkippedLine(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "requests.csv")
	os.WriteFile(trace, []byte("0,a\n"+strings.Repeat("x\n", 2500)), 0o644)
	code, _, errOut := runSluice(t, "simulate", "-trace", trace, "-limit", "1/1s", "-skip-bad-lines", "-algorithms", "gcra")
	if code != 0 || !strings.Contains(errOut, "requests.csv: … and 2480 more lines skipped\n") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestSimulateRetryFlagsKeepTheStormDefaults(t *testing.T) {
	code, out, errOut := runSluice(t, "simulate", "-pattern", "retry-storm", "-retry-max", "2", "-algorithms", "gcra")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "retry up to 2 times, 50.0% of retries after 10ms") {
		t.Errorf("output:\n%s", out)
	}
}

func TestSimulateRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "-format", "xml"},
		{"simulate", "-chart", "out.gif"},
		{"simulate", "-pattern", "tsunami"},
		{"simulate", "-limit", "lots"},
		{"simulate", "-trace", "x.csv", "-pattern", "steady"},
		{"simulate", "-nope"},
		{"simulate", "extra"},
	} {
		if code, _, _ := runSluice(t, args...); code == 0 {
			t.Errorf("%q: exit 0", args)
		}
	}
}

// A command line simulate or design cannot read exits with status 2, as
// every sluice command's usage errors do (sluice keys -token and
// -token-file, sluice import -from xml): a flag's value it does not take,
// two flags that exclude each other, a flag the input does not use, no
// rate at all.
func TestSimulateAndDesignUsageErrorsExitTwo(t *testing.T) {
	api := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(api, []byte("plans: [{name: free, limits: [{rate: 5/1s}]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"simulate", "-format", "xml"},
		{"simulate", "-max-wait", "soon"},
		{"simulate", "-chart", "out.gif"},
		{"simulate", "-trace", "x.csv", "-pattern", "steady"},
		{"design", "-rate", "100/1m", "-format", "xml"},
		{"design", "-rate", "100/1m", "-shadow"},
		{"design", "-requirements", api, "-rate", "100/1m"},
		{"design"},
		{"simulate", "-pattern", "tsunami"},
		{"simulate", "-limit", "lots"},
		{"simulate", "-algorithms", "gcra,magic"},
		{"design", "-rate", "abc"},
		{"design", "-rate", "100/1m", "-precision", "perfect"},
		{"simulate", "-retry-max", "1000"},
		{"simulate", "-pattern", "retry-storm", "-retry-impatient", "2"},
		{"simulate", "-retry-gap", "-1s"},
		{"simulate", "-cost", "2000000000000"},
	} {
		if code, _, stderr := runSluice(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, strings.TrimSpace(stderr))
		}
	}
}

// What simulate or design cannot use in a file it reads is the file's
// fault, not the command line's: status 1, not 2.
func TestSimulateAndDesignFileErrorsExitOne(t *testing.T) {
	dir := t.TempDir()
	reqs := filepath.Join(dir, "reqs.yaml")
	if err := os.WriteFile(reqs, []byte("rate: abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(trace, []byte("0,a,1\nnot a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"design", "-requirements", reqs},
		{"simulate", "-trace", trace, "-limit", "1/1s"},
		{"simulate", "-trace", filepath.Join(dir, "missing.csv"), "-limit", "1/1s"},
	} {
		if code, _, stderr := runSluice(t, args...); code != 1 {
			t.Errorf("%q: exit %d, want 1 (%s)", args, code, strings.TrimSpace(stderr))
		}
	}
}

// A sliding window log of a million per second sums up to a million
// entries on each of 2.4 million decisions: hours of work, which the
// command refuses up front, naming the flag that allows it, rather than
// running without a word.
func TestSimulateRefusesWorkAboveMaxWork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"simulate", "-limit", "1000000/1s", "-duration", "2s", "-algorithms", "sliding-window-log"}, &out, &errOut)
	if code == 0 || !strings.Contains(errOut.String(), "decisions of work") || !strings.Contains(errOut.String(), "-max-work") {
		t.Errorf("exit %d, stderr %q: want the work refused, naming -max-work", code, errOut.String())
	}
	errOut.Reset()
	code = run(context.Background(), []string{"simulate", "-limit", "1000/1s", "-duration", "2s", "-algorithms", "gcra", "-max-work", "0"}, &out, &errOut)
	if code != 0 {
		t.Errorf("-max-work 0: exit %d, stderr %q: want the work unbounded", code, errOut.String())
	}
}

// A pattern's requests spend at least 1 unit: -cost 0, which the pattern
// would read as its default of 1, is refused rather than simulated as
// requests of cost 1 under a heading that does not say so.
func TestSimulateRefusesCostZero(t *testing.T) {
	code, out, errOut := runSluice(t, "simulate", "-limit", "10/1s", "-cost", "0")
	if code != 2 || !strings.Contains(errOut, "-cost 0") || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q: want -cost 0 refused (exit 2)", code, out, errOut)
	}
}
