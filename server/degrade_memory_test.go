package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
)

// A memory threshold of a process whose memory nothing limits can never be
// reached (its share reads 0): the sampling loop says so, once per
// configuration, not at every sample, and again if a limit there goes; a
// configuration without a memory threshold, or a limited process, says
// nothing.
func TestAMemoryThresholdWithoutAMemoryLimitIsLoggedAsUnmeasured(t *testing.T) {
	parse := func(levels string) *config.Config {
		cfg, err := config.Parse("d.yaml", []byte("plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\ndegradation:\n  levels:\n"+levels))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	withMemory := parse("    elevated: {enter: {memory: 0.9, cpu: 0.9}}\n")
	withoutMemory := parse("    elevated: {enter: {cpu: 0.9}}\n")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var u unlimitedMemory
	unlimited, limited := degrade.Signals{MemoryUnlimited: true}, degrade.Signals{Memory: 0.2}
	count := func() int { return strings.Count(logs.String(), "degradation signal unmeasured") }
	for range 30 {
		u.note(log, withMemory, unlimited)
	}
	if n := count(); n != 1 || !strings.Contains(logs.String(), "signals=memory") || !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("30 samples without a limit: %d warnings, want 1 naming memory:\n%s", n, logs.String())
	}
	for range 10 {
		u.note(log, withMemory, limited)
	}
	u.note(log, withMemory, unlimited) // the limit went
	if n := count(); n != 2 {
		t.Errorf("a limit that came and went: %d warnings in all, want 2", n)
	}
	u.note(log, withoutMemory, unlimited) // a reload without a memory threshold
	if n := count(); n != 2 {
		t.Errorf("a configuration without a memory threshold: %d warnings in all, want 2", n)
	}
}
