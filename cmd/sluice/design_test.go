package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
)

func TestDesignWritesAnAnalysisAndAValidConfig(t *testing.T) {
	dir := t.TempDir()
	reqs := filepath.Join(dir, "needs.yaml")
	os.WriteFile(reqs, []byte("rate: 100/1m\nburst: 20\nprecision: strict\nkeys: 10000\ninstances: 3\n"), 0o644)
	cfgFile, mdFile := filepath.Join(dir, "sluice.yaml"), filepath.Join(dir, "design.md")
	code, out, errOut := runSluice(t, "design", "-requirements", reqs, "-redis-addresses", "10.0.0.1:6379",
		"-config", cfgFile, "-o", mdFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != "" {
		t.Errorf("stdout %q with -o", out)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatalf("the generated config does not load: %v", err)
	}
	plan := cfg.Policy.Plan(cfg.Policy.DefaultPlan)
	if cfg.Store.Type != "redis" || cfg.Store.Redis.Instances != 3 || !slices.Equal(cfg.Store.Redis.Addresses, []string{"10.0.0.1:6379"}) ||
		plan == nil || plan.Limits[0].String() != "per-minute: gcra 81 per 1m0s burst 20" {
		t.Fatalf("loaded store %+v, plan %+v", cfg.Store, plan)
	}
	md, _ := os.ReadFile(mdFile)
	for _, want := range []string{"**gcra, 81 per 1m, burst 20**, in a Redis store (standalone) shared by 3 instances",
		"never above the limit", "| fixed-window | 200 (+100%)", "## Trade-offs", "## Next steps", "```yaml"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("analysis lacks %q", want)
		}
	}
	// Checking the written file with sluice check passes too.
	if code, _, errOut := runSluice(t, "check", cfgFile); code != 0 {
		t.Errorf("sluice check: exit %d: %s", code, errOut)
	}
}

func TestDesignFlagsOverrideTheFile(t *testing.T) {
	reqs := filepath.Join(t.TempDir(), "needs.yaml")
	os.WriteFile(reqs, []byte("rate: 100/1m\nprecision: strict\n"), 0o644)
	code, out, errOut := runSluice(t, "design", "-requirements", reqs, "-precision", "loose", "-format", "yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "algorithm: fixed-window") || strings.Contains(out, "## ") {
		t.Fatalf("-format yaml printed:\n%s", out)
	}
	if _, err := config.Parse("stdout", []byte(out)); err != nil {
		t.Fatal(err)
	}
}

func TestDesignRefusesBadRequirements(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("rate: 100/1m\nbursts: 3\n"), 0o644)
	for _, args := range [][]string{
		{"design"},
		{"design", "-rate", "100/1m", "-precision", "exactish"},
		{"design", "-requirements", bad},
		{"design", "-rate", "100/1m", "-format", "pdf"},
	} {
		code, _, errOut := runSluice(t, args...)
		if code == 0 {
			t.Errorf("%q: exit 0", args)
		}
		if len(args) > 1 && args[1] == "-requirements" && !strings.Contains(errOut, bad+":2:1: bursts: unknown field") {
			t.Errorf("unknown field error %q does not name the line", errOut)
		}
	}
}

// A monthly quota from the command line: the configuration it writes loads
// as the calendar month, and the analysis names the month.
func TestDesignCalendarQuotaFromFlags(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "sluice.yaml")
	code, md, errOut := runSluice(t, "design", "-rate", "10000/month", "-zone", "+09:00", "-starts", "15", "-config", cfgFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatalf("the generated config does not load: %v", err)
	}
	want := sluice.Calendar(10000, sluice.Month).WithOffset(14*24*time.Hour - 9*time.Hour)
	if l := cfg.Policy.Plan(cfg.Policy.DefaultPlan).Limits[0]; l.String() != want.String() {
		t.Errorf("loaded %v, want %v", l, want)
	}
	for _, s := range []string{"**fixed-window, 10000 per month (from the 15th, UTC+09:00)**", "window: month", "worst calendar month"} {
		if !strings.Contains(md, s) {
			t.Errorf("the analysis lacks %q", s)
		}
	}
	// The replay command the analysis suggests runs as written, on the
	// same shifted months.
	i := strings.Index(md, "`sluice simulate -trace requests.csv")
	if i < 0 {
		t.Fatalf("the analysis suggests no replay command:\n%s", md)
	}
	command := md[i+1 : i+1+strings.IndexByte(md[i+1:], '`')]
	trace := filepath.Join(dir, "requests.csv")
	if err := os.WriteFile(trace, []byte("2026-03-14T15:30:00Z,a\n2026-03-14T16:00:00Z,a\n2026-03-14T17:00:00Z,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(strings.ReplaceAll(command, "requests.csv", trace))[1:]
	args = slices.DeleteFunc(args, func(a string) bool { return strings.HasSuffix(a, ".svg") })
	if k := slices.Index(args, "-chart"); k >= 0 {
		args = slices.Delete(args, k, k+1)
	}
	code, out, errOut := runSluice(t, args...)
	if code != 0 || !strings.Contains(out, "limit 10000/month, whole again on the 15th at 00:00 UTC+09:00, per key") {
		t.Errorf("%q: exit %d\n%s%s", command, code, out, errOut)
	}
	if code, _, errOut := runSluice(t, "design", "-rate", "100/1m", "-zone", "+09:00"); code == 0 || !strings.Contains(errOut, "calendar") {
		t.Errorf("a zone on a rate per minute: exit %d: %s", code, errOut)
	}
}

// -redis-addresses is a comma-separated list; spaces after the commas are
// not part of an address.
func TestDesignRedisAddressesListTrimsSpaces(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "sluice.yaml")
	code, _, errOut := runSluice(t, "design", "-rate", "100/1m", "-store", "redis", "-redis-mode", "cluster", "-redis-addresses", "10.0.0.1:6379, 10.0.0.2:6379", "-config", cfgFile, "-format", "yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Store.Redis.Addresses; !slices.Equal(got, []string{"10.0.0.1:6379", "10.0.0.2:6379"}) {
		t.Errorf("addresses %q", got)
	}
	if code, _, errOut := runSluice(t, "design", "-rate", "100/1m", "-store", "redis", "-redis-mode", "cluster", "-redis-addresses", "10.0.0.1:6379,,10.0.0.2:6379", "-format", "yaml"); code != 2 || !strings.Contains(errOut, "redis_addresses[1]") {
		t.Errorf("an empty address: exit %d, %s", code, errOut)
	}
}

// A standalone store is one server: several addresses for a store whose
// mode, given or chosen by the designer, is standalone are refused (a
// design that cannot be made: exit 1), not written into a configuration
// that would refuse them.
func TestDesignRefusesSeveralAddressesForOneServer(t *testing.T) {
	for _, mode := range []string{"", "standalone"} {
		args := []string{"design", "-rate", "100/1m", "-store", "redis", "-redis-addresses", "10.0.0.1:6379,10.0.0.2:6379", "-format", "yaml"}
		if mode != "" {
			args = append(args, "-redis-mode", mode)
		}
		if code, _, errOut := runSluice(t, args...); code != 1 || !strings.Contains(errOut, "redis_addresses[1]") || !strings.Contains(errOut, "sentinel or cluster") {
			t.Errorf("mode %q: exit %d, %s", mode, code, errOut)
		}
	}
}
