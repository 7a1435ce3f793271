package logsample

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines returns the JSON lines of buf, decoded.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if s == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("line %q: %v", s, err)
		}
		out = append(out, m)
	}
	return out
}

// A failure on every request writes one line per Interval for each
// message, the next line counting those left out.
func TestWarnWritesOneLinePerIntervalAndCountsTheRest(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &Log{now: func() time.Time { return now }}
	ctx := context.Background()
	for range 1000 {
		l.Warn(ctx, log, "store down", "err", "refused")
		l.Warn(ctx, log, "lease lost")
	}
	got := lines(t, &buf)
	if len(got) != 2 || got[0]["msg"] != "store down" || got[1]["msg"] != "lease lost" || got[0]["err"] != "refused" {
		t.Fatalf("2,000 warnings of two messages at one time wrote %v, want one line of each", got)
	}
	if _, ok := got[0]["left_out"]; ok {
		t.Errorf("the first line says %v were left out", got[0]["left_out"])
	}

	buf.Reset()
	now = now.Add(Interval - time.Nanosecond)
	l.Warn(ctx, log, "store down")
	if buf.Len() != 0 {
		t.Fatalf("a warning within Interval of the last line was written: %s", buf.String())
	}
	now = now.Add(time.Nanosecond)
	l.Warn(ctx, log, "store down", "err", "timeout")
	got = lines(t, &buf)
	if len(got) != 1 || got[0]["left_out"] != float64(1000) || got[0]["err"] != "timeout" {
		t.Fatalf("the warning Interval after the last line wrote %v, want one line with left_out 1000 (999 + 1)", got)
	}
	buf.Reset()
	now = now.Add(Interval)
	l.Warn(ctx, log, "store down")
	if got = lines(t, &buf); len(got) != 1 || got[0]["left_out"] != nil {
		t.Fatalf("after a quiet Interval: %v, want one line without left_out", got)
	}
}

// The zero Log is ready, and safe for concurrent use.
func TestZeroLogUnderConcurrency(t *testing.T) {
	var (
		mu  sync.Mutex
		buf bytes.Buffer
		l   Log
		wg  sync.WaitGroup
	)
	log := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				l.Warn(context.Background(), log, "store down")
			}
		}()
	}
	wg.Wait()
	if got := lines(t, &buf); len(got) != 1 {
		t.Fatalf("1,600 concurrent warnings wrote %d lines, want 1", len(got))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
