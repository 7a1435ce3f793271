package server_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// A refusal line repeats the request's method and path, which the client
// chooses up to the listener's header bound (64 KiB): each is cut, so a
// line a refused stranger makes stays small whatever it sends.
func TestRefusalLineCutsLongMethodAndPath(t *testing.T) {
	var logs realtest.Buffer
	f := newFixtureWith(t, testConfig, func(o *server.Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	path := "/api/" + strings.Repeat("é", 20000)
	method := strings.Repeat("M", 20000)
	for range 4 {
		readAll(t, f.do(t, method, path, "", nil))
	}
	// The line follows the answer's last byte.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "request refused") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	lines := refusalLines(t, logs.String(), "request refused")
	if len(lines) != 1 {
		t.Fatalf("%d refusal lines, want 1:\n%.2000s", len(lines), logs.String())
	}
	p, _ := lines[0]["path"].(string)
	m, _ := lines[0]["method"].(string)
	if len(p) > 1100 || !strings.HasPrefix(p, "/api/éé") || strings.ContainsRune(p, '\uFFFD') {
		t.Errorf("the refused path is logged as %d bytes (%.40q…), want its first KiB, cut between characters", len(p), p)
	}
	if len(m) > 100 || !strings.HasPrefix(m, "MMM") {
		t.Errorf("the refused method is logged as %d bytes, want a few", len(m))
	}
}
