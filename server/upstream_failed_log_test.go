package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// While the upstream cannot be reached every admitted request fails, and
// each would make a line: the lines are bounded, ten a second, the rest
// counted in a line a second, and the path a line repeats is cut, so an
// upstream's outage (or a path that makes it fail) cannot flood the log.
func TestUpstreamFailureLinesAreBounded(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	var logs realtest.Buffer
	f := newFixtureWith(t, `
identity: {trusted_proxies: [127.0.0.1/32]}
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}]}
default_plan: free
anonymous_plan: free
`, func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		o.Config.Upstream = gone.URL
	})
	l := serveOn(t, f.srv)
	const requests = 60
	start := time.Now()
	for range requests {
		r, _ := sendRequestLine(t, l.public, "GET /api/"+strings.Repeat("x", 5000))
		if r.StatusCode != http.StatusBadGateway {
			t.Fatalf("a request to an upstream that is gone: %d, want 502", r.StatusCode)
		}
	}
	most := 10 * (int(time.Since(start)/time.Second) + 2) // the requests may span two seconds
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "upstream failures not logged") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.Count(logs.String(), `msg="upstream failed"`); n == 0 || n > most {
		t.Errorf("%d failed requests made %d lines, want 1 to %d", requests, n, most)
	}
	if !strings.Contains(logs.String(), "upstream failures not logged") {
		t.Error("no line counts the failures left out")
	}
	for line := range strings.Lines(logs.String()) {
		if len(line) > 2048 {
			t.Errorf("a line of %d bytes: %.200s…", len(line), line)
			break
		}
	}
}
