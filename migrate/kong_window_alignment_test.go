package migrate_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/migrate"
	"github.com/sluice-dev/sluice/server"
)

// serveImportedAt is serveImported with a clock the test moves.
func serveImportedAt(t *testing.T, tr *migrate.Translation, now *time.Time) http.Handler {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(up.Close)
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("imported.yaml", []byte("upstream: "+up.URL+"\n"+files[migrate.ConfigFile]))
	if err != nil {
		t.Fatalf("%v\n%s", err, files[migrate.ConfigFile])
	}
	clock := func() time.Time { return *now }
	store := memory.New(memory.WithClock(clock), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return srv.PublicHandler()
}

// TestImportedKongAdvancedWeekStartsOnThursday: rate-limiting-advanced's
// windows start where the Unix time is a multiple of window_size, so a
// fixed window of 604800 s (a week) starts on Thursdays at 00:00 UTC
// (1970-01-01 was a Thursday). sluice's windows start at its Epoch,
// 2020-01-01, a Wednesday: the import must write a calendar week from
// Thursday, so a request on Wednesday noon and one on Thursday noon fall
// in two windows, and a second on Thursday in the same one.
func TestImportedKongAdvancedWeekStartsOnThursday(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting-advanced
    config: {limit: [1], window_size: [604800], window_type: fixed, identifier: ip}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, time.January, 7, 12, 0, 0, 0, time.UTC) // a Wednesday
	h := serveImportedAt(t, tr, &now)
	first := sendKey(h, "/x", "", "192.0.2.1")
	now = time.Date(2026, time.January, 8, 12, 0, 0, 0, time.UTC) // Thursday: Kong's next window
	second, third := sendKey(h, "/x", "", "192.0.2.1"), sendKey(h, "/x", "", "192.0.2.1")
	if first != 200 || second != 200 || third != 429 {
		t.Errorf("Wednesday noon, then Thursday noon twice: %d, %d, %d; want 200, 200, 429 (Kong's week turns on Thursday at 00:00 UTC)", first, second, third)
	}
}

// TestImportKongAdvancedWindowOffTheEpochIsReported: a window that does not
// divide the Unix time of sluice's Epoch (1577836800 s) starts elsewhere in
// sluice than in Kong, and no calendar says Kong's: the report must say so
// (not Same), naming the window_size; a window that divides it (3600 s)
// is not reported.
func TestImportKongAdvancedWindowOffTheEpochIsReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting-advanced
    config: {limit: [10, 100], window_size: [3600, 100000], window_type: fixed, identifier: ip}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var off, on bool
	for _, d := range tr.Differences {
		off = off || !d.Same && strings.Contains(d.Where, "window_size 100000")
		on = on || strings.Contains(d.Where, "window_size 3600")
	}
	if !off || on {
		t.Errorf("window_size 100000 reported: %v, want true; window_size 3600 reported: %v, want false", off, on)
		for _, d := range tr.Differences {
			t.Logf("%v %s: %s", d.Same, d.Where, d.Text)
		}
	}
}
