package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The flags that shape a built-in pattern's traffic (patternFlags: -keys,
// -rate, -duration, -cost, -skew and each pattern's own) mean nothing with
// -trace, whose lines hold the requests' times, keys and costs. simulate
// refuses them with status 2, naming each, as it refuses any flag the
// input does not use (TestSimulateAndDesignUsageErrorsExitTwo): run
// silently, `-trace requests.csv -cost 5` would print the figures of the
// bare trace as if it had been replayed at cost 5. The flags of the
// limit, the measure and the output, -seed and -retry-*, which a replay
// uses (and which the designer's suggested replay commands pass), are
// accepted.
func TestSimulateTraceRefusesPatternFlags(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "requests.csv")
	if err := os.WriteFile(trace, []byte("0,a\n0.5,a\n1,b,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"simulate", "-trace", trace, "-limit", "1/1s", "-algorithms", "gcra"}
	values := map[string]string{
		"keys": "50", "rate": "100", "duration": "1h", "cost": "5", "burst-size": "3", "spread": "1s",
		"spike-at": "1s", "spike-length": "1s", "spike-factor": "4", "period": "1h", "amplitude": "0.5", "skew": "1.5",
	}
	for _, name := range patternFlags {
		v, ok := values[name]
		if !ok {
			t.Fatalf("no value to try for -%s", name)
		}
		args := append(append([]string{}, base...), "-"+name, v)
		code, out, stderr := runSluice(t, args...)
		if code != 2 || !strings.Contains(stderr, "-"+name+" with -trace") {
			t.Errorf("sluice %s: exit %d, want 2 naming -%s as a flag a trace does not use; stdout:\n%sstderr: %s",
				strings.Join(args, " "), code, name, out, stderr)
		}
	}
	args := append(append([]string{}, base...), "-cost", "0", "-keys", "2")
	if code, _, stderr := runSluice(t, args...); code != 2 || !strings.Contains(stderr, "-keys, -cost with -trace") {
		t.Errorf("sluice %s: exit %d, want 2 naming -keys and -cost; stderr: %s", strings.Join(args, " "), code, stderr)
	}
	chart := filepath.Join(t.TempDir(), "replay.svg")
	for _, extra := range [][]string{
		{"-burst", "2", "-reference", "2/1s", "-chart", chart},
		{"-limit", "10/month", "-zone", "+09:00", "-starts", "15"},
		{"-seed", "7", "-retry-max", "2", "-retry-impatient", "0.5", "-retry-gap", "10ms"},
		{"-max-wait", "100ms", "-max-work", "0", "-skip-bad-lines", "-format", "json"},
	} {
		args := append(append([]string{}, base...), extra...)
		if code, _, stderr := runSluice(t, args...); code != 0 {
			t.Errorf("sluice %s: exit %d, want 0; stderr: %s", strings.Join(args, " "), code, stderr)
		}
	}
}
