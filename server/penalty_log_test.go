package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
)

// "penalty box: client boxed" lines are bounded as refusal lines are (10
// a second, docs/operations.md, Logs): a flood of refusals from many
// addresses, each boxed at its first refusal, cannot flood the log.
func TestPenaltyBoxLinesAreBoundedAsRefusalLinesAre(t *testing.T) {
	cfg, err := config.Parse("sluice.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}
default_plan: free
anonymous_plan: free
penalty: {refusals: 1, within: 1m, for: 10m}
`))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := New(Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	public := srv.PublicHandler()
	start := time.Now()
	refused := 0
	for i := range 100 {
		for range 2 {
			req := httptest.NewRequest("GET", "/api/x", nil)
			req.RemoteAddr = fmt.Sprintf("198.51.100.%d:40000", i+1)
			rec := httptest.NewRecorder()
			public.ServeHTTP(rec, req)
			if rec.Code == http.StatusTooManyRequests {
				refused++
			}
		}
	}
	seconds := int(time.Now().Unix()-start.Unix()) + 1
	if refused != 100 {
		t.Fatalf("%d requests refused, want 100 (each address's second)", refused)
	}
	boxed := strings.Count(logs.String(), "penalty box: client boxed")
	lines := strings.Count(logs.String(), `msg="request refused"`)
	if most := 10 * seconds; boxed > most {
		t.Errorf("a flood of refusals from 100 addresses over %d s wrote %d \"penalty box: client boxed\" lines (and %d \"request refused\" lines), want at most %d: the boxing lines are not bounded as the refusal lines are",
			seconds, boxed, lines, most)
	}
}
