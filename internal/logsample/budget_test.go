package logsample

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// A Budget writes at most perSecond lines in a second of the wall clock;
// the first line written after some were left out counts them.
func TestBudgetWritesPerSecondLinesAndCountsTheRest(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &Budget{now: func() time.Time { return now }}
	ctx := context.Background()
	for range 100 {
		b.Info(ctx, log, 3, "client boxed", "subject", "a")
	}
	got := lines(t, &buf)
	if len(got) != 3 {
		t.Fatalf("100 lines in one second with a budget of 3 wrote %d, want 3", len(got))
	}
	for _, l := range got {
		if _, ok := l["left_out"]; ok {
			t.Errorf("a line within the budget says %v were left out", l["left_out"])
		}
	}
	buf.Reset()
	now = now.Add(time.Second)
	b.Info(ctx, log, 3, "client boxed", "subject", "b")
	got = lines(t, &buf)
	if len(got) != 1 || got[0]["subject"] != "b" || got[0]["left_out"] != float64(97) {
		t.Errorf("the next second's first line: %v, want subject b with left_out 97", got)
	}
	buf.Reset()
	b.Info(ctx, log, 0, "client boxed")
	if buf.Len() != 0 {
		t.Errorf("a budget of 0 wrote %q, want nothing", buf.String())
	}
}
