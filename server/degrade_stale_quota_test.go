package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Level 2 answers reads from stale copies to spare the upstream, not to
// spare clients their limits: a client its limits refuse is refused a
// copy too, and one they admit is charged for it, as at level 1. A copy
// served is not copied again: its Age counts from the upstream's answer.
func TestAStaleCopyIsServedOnlyWithinTheClientsLimits(t *testing.T) {
	var upstream int
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream++
		w.Write([]byte("ok"))
	}))
	t.Cleanup(up.Close)
	cfg, err := config.Parse("d.yaml", []byte("upstream: "+up.URL+`
plans:
  free:
    limits:
      - {name: per-hour, algorithm: fixed-window, quantity: 8, window: 1h}
degradation:
  factor: 0.5
  stale_for: 1m
  levels:
    critical: {enter: {in_flight: 100000}}
`+testAdmin))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	// The store's clock stands still at noon: on the wall clock an hour
	// that ended among the requests gave the limit its quantity again.
	still := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0))
	srv, err := server.New(server.Options{Config: cfg, Store: still, Clock: clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l := serveOn(t, srv)
	var ages []string
	admitted := func(n int) (ok int) {
		for range n {
			if code, h := status(t, "GET", "http://"+l.public+"/x"); code == 200 {
				ok++
				ages = append(ages, h.Get("Age"))
				mu.Lock()
				now = now.Add(10 * time.Second)
				mu.Unlock()
			}
		}
		return ok
	}
	pinLevel(t, "http://"+l.admin, "elevated")
	first := admitted(1) // copied; 1 of level 1's 4 spent
	pinLevel(t, "http://"+l.admin, "high")
	second := admitted(10)
	if first != 1 || second != 3 || upstream != 1 {
		t.Errorf("admitted %d of 1 at level 1, %d of 10 at level 2 (want 3: the limit of 4 less the 1 spent), %d reached the upstream (want 1)",
			first, second, upstream)
	}
	if want := []string{"", "10", "20", "30"}; !slices.Equal(ages, want) {
		t.Errorf("Age of the answers %q, want %q", ages, want)
	}
}
