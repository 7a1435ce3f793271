package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/sluice-dev/sluice/degrade"
)

// A CPU share the monitor cannot measure (its cgroup's count
// unreadable) is logged once as it turns unknown, as a warning naming it,
// not at every sample, and once as it is measured again, with the samples
// it was unknown for: an operator learns that its thresholds decided
// nothing, and for how long.
func TestAnUnknownCPUIsLoggedOnceAndCounted(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	var u unknownCPU
	cpu := degrade.Signals{CPUUnknown: true}
	for _, s := range []degrade.Signals{{}, cpu, cpu, cpu, {}, {}, cpu} {
		u.note(log, s)
	}
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	want := []struct {
		level, msg string
		samples    float64 // 0: no samples field
	}{
		{"WARN", "degradation signal unknown", 0},
		{"INFO", "degradation signal measured again", 3},
		{"WARN", "degradation signal unknown", 0},
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %v, want %d", lines, len(want))
	}
	for i, w := range want {
		l := lines[i]
		if l["level"] != w.level || l["msg"] != w.msg || l["signal"] != "cpu" {
			t.Errorf("line %d: %v, want %s %q of signal cpu", i, l, w.level, w.msg)
		}
		if got, _ := l["unknown_samples"].(float64); got != w.samples {
			t.Errorf("line %d: unknown_samples %v, want %v", i, l["unknown_samples"], w.samples)
		}
	}
}
