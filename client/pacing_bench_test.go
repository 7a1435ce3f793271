package client_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

const pacingPlan = `
plans:
  paced:
    limits:
      - {name: per-second, algorithm: gcra, quantity: %d, window: 1s, burst: %d}
`

// BenchmarkPacing sends n requests from a cold start through one
// Transport, from 1, 8 and 64 goroutines, to a real sluice server whose
// limit is rate per second with a burst, and reports the time taken as a
// multiple of the ideal, burst + (n − burst)/rate (x-ideal: the burst goes
// at once), and the 429s
// met on the wire (429s). Each iteration is a new server and a new
// Transport. Run it with -benchtime=1x: an iteration takes seconds.
func BenchmarkPacing(b *testing.B) {
	for _, c := range []struct{ rate, burst, n int }{{20, 5, 80}, {100, 10, 500}, {100, 5, 500}} {
		ideal := time.Duration(c.n-c.burst) * time.Second / time.Duration(c.rate)
		for _, workers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("rate=%d/burst=%d/n=%d/goroutines=%d", c.rate, c.burst, c.n, workers), func(b *testing.B) {
				var took time.Duration
				var refused int64
				for range b.N {
					srv := newSluiceServer(b, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
						fmt.Sprintf(pacingPlan, c.rate, c.burst))
					wire := newWire(b)
					hc := &http.Client{Transport: &client.Transport{Base: wire}}
					start := time.Now()
					statuses := batch(b, hc, srv.URL+"/items", c.n, workers)
					took += time.Since(start)
					refused += wire.tooMany.Load()
					if statuses[200] != c.n {
						b.Fatalf("statuses %v", statuses)
					}
					srv.Close()
					srv.admin.Close()
				}
				b.ReportMetric(float64(took)/float64(b.N)/float64(ideal), "x-ideal")
				b.ReportMetric(float64(refused)/float64(b.N), "429s")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
