package server_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Without an upstream sluice proxies nothing: in_flight, p99 and
// error_rate measure the reverse proxy's requests and its upstream's
// answers, so a decision service's thresholds of them can never be
// reached, whatever its load. The sampling loop says so once per
// configuration, as a warning naming them, not at every sample.
func TestRequestSignalsWithoutAnUpstreamAreLoggedAsUnmeasured(t *testing.T) {
	cfg, err := config.Parse("d.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-minute, algorithm: gcra, quantity: 100, window: 1m}
degradation:
  interval: 10ms
  levels:
    elevated: {enter: {in_flight: 50, cpu: 0.9}}
    high: {enter: {in_flight: 100, p99: 1s}}
`+testAdmin))
	if err != nil {
		t.Fatal(err)
	}
	var logs realtest.Buffer
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	time.Sleep(300 * time.Millisecond) // about 30 samples
	var lines []string
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, "degradation signal unmeasured") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") ||
		!strings.Contains(lines[0], "in_flight") || !strings.Contains(lines[0], "p99") || strings.Contains(lines[0], "cpu") {
		t.Errorf("warnings of unmeasured signals %q, want one naming in_flight and p99 (not cpu)", lines)
	}
}
