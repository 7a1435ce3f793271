package server_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A client's use carries over between levels, the level's scaled limits
// sharing their states with the configured ones: 6 requests of a limit of
// 10 spent at level 0 leave, at level 1's 5 (factor 0.5), nothing to the
// algorithms that count requests and 2 to those that count time (their
// share spent, 60%, carries), and what level 1 admitted is spent when the
// level ends. No level lets a client pass its configured limit: 10 in all.
func TestSpentQuotaCarriesAcrossLevels(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(up.Close)
	for algo, atLevel1 := range map[string]int{"fixed-window": 0, "sliding-window-log": 0, "sliding-window-counter": 0,
		"token-bucket": 2, "leaky-bucket": 2, "gcra": 2} {
		t.Run(algo, func(t *testing.T) {
			yaml := fmt.Sprintf(`upstream: %s
plans:
  free:
    limits:
      - {name: per-hour, algorithm: %s, quantity: 10, window: 1h}
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 100000}}
`, up.URL, algo)
			cfg, err := config.Parse("d.yaml", []byte(yaml+testAdmin))
			if err != nil {
				t.Fatal(err)
			}
			// The store's clock stands still at noon: on the wall clock an
			// hour that ended among the requests gave its quantity again.
			still := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0))
			srv, err := server.New(server.Options{Config: cfg, Store: still,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			l := serveOn(t, srv)
			admitted := func(n int) (ok int) {
				for range n {
					if code, _ := status(t, "GET", "http://"+l.public+"/x"); code == 200 {
						ok++
					}
				}
				return ok
			}
			first := admitted(6)
			pinLevel(t, "http://"+l.admin, "elevated")
			second := admitted(10)
			pinLevel(t, "http://"+l.admin, "normal")
			third := admitted(10)
			if first != 6 || second != atLevel1 || first+second+third > 10 {
				t.Errorf("admitted %d of 6 at level 0, %d of 10 at level 1 (want %d), %d of 10 at level 0 again: %d in all, want at most 10",
					first, second, atLevel1, third, first+second+third)
			}
		})
	}
}
