package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// The signals are read over the last interval also while no degradation
// section is in force: one added by a reload is judged on what the
// upstream does now, not on every answer since the instance started.
func TestDegradationAddedByAReloadReadsOnlyTheLastInterval(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(up.Close)
	plans := "upstream: " + up.URL + `
plans:
  free:
    limits: [{name: per-second, algorithm: gcra, quantity: 100000, window: 1s}]
` + testAdmin
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(file, []byte(plans), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Load:   func() (*config.Config, error) { return config.Load(file) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l := serveOn(t, srv)
	for range 10 {
		if code, _ := status(t, "GET", "http://"+l.public+"/api/search"); code != 500 {
			t.Fatalf("upstream answer: %d, want 500", code)
		}
	}
	time.Sleep(2300 * time.Millisecond) // two intervals of 1s: the 500s are in the past
	os.WriteFile(file, []byte(plans+`
degradation:
  min_answers: 1
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`), 0o644)
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := srv.SampleNow(); got != degrade.Normal {
		t.Errorf("level %v right after the section came, error rate %v: the 500s of seconds ago were read as now's",
			got, srv.Degradation().Signals.ErrorRate)
	}
}
