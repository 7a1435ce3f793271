package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRefusalLogBudget: at most perSecond lines each second; the lines left
// out are said, counted, in one line at the next flush, and only once; 0
// logs nothing.
func TestRefusalLogBudget(t *testing.T) {
	var l refusalLog
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	taken := 0
	for i := range 10 {
		if l.take(3, t0.Add(time.Duration(i)*time.Millisecond)) {
			taken++
		}
	}
	if taken != 3 {
		t.Errorf("%d lines of 10 in one second, want 3", taken)
	}
	if !l.take(3, t0.Add(time.Second)) {
		t.Error("the next second has no budget")
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l.flush(log, 3)
	l.flush(log, 3)
	if got := buf.String(); strings.Count(got, "refusals not logged") != 1 || !strings.Contains(got, "count=7") {
		t.Errorf("flushes logged %q, want one line of count=7", got)
	}
	var none refusalLog
	if none.take(0, t0) {
		t.Error("refusals_per_second 0 took a line")
	}
}
