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

// A client's use carries over between degradation levels as the share of
// the limit spent (operations.md, SluiceDegraded), also when the level's
// factor changes the bucket's rate in lowest terms: a client that spent all
// 10 of a 10/h bucket at level 0 has spent its hour of refill, and level 1
// at a factor of 0.7 (a 7/h bucket of burst 7) admits nothing more, nor
// does level 0 again, so that no level lets a client pass its configured
// 10 within the hour. Token and leaky buckets keep their debt as a refill
// time, as GCRA does.
func TestSpentBucketCarriesAcrossAFactorThatChangesTheRate(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(up.Close)
	for _, algo := range []string{"token-bucket", "leaky-bucket", "gcra"} {
		t.Run(algo, func(t *testing.T) {
			yaml := fmt.Sprintf(`upstream: %s
plans:
  free:
    limits:
      - {name: per-hour, algorithm: %s, quantity: 10, window: 1h}
degradation:
  factor: 0.7
  levels:
    critical: {enter: {in_flight: 100000}}
`, up.URL, algo)
			cfg, err := config.Parse("d.yaml", []byte(yaml+testAdmin))
			if err != nil {
				t.Fatal(err)
			}
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
			first := admitted(10)
			pinLevel(t, "http://"+l.admin, "elevated")
			second := admitted(10)
			pinLevel(t, "http://"+l.admin, "normal")
			third := admitted(10)
			if first != 10 || second != 0 || third != 0 {
				t.Errorf("admitted %d of 10 at level 0, %d at level 1 (factor 0.7), %d at level 0 again, all in the same instant: want 10, 0, 0",
					first, second, third)
			}
		})
	}
}
