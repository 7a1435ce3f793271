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

// The lines left out are said at most once a second, whatever the
// interval flush is called at (the degradation interval: 25 ms here).
func TestRefusalLogSummaryAtMostOnceASecond(t *testing.T) {
	var l refusalLog
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	for i := range 80 { // two seconds of flushes every 25 ms, a refusal left out before each
		now := t0.Add(time.Duration(i) * 25 * time.Millisecond)
		l.take(0, now)
		l.left++
		l.flushAt(log, 1, now)
	}
	if n := strings.Count(buf.String(), "refusals not logged"); n != 2 {
		t.Errorf("%d summary lines over two seconds, want 2:\n%s", n, buf.String())
	}
}
