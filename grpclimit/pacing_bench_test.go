package grpclimit_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// BenchmarkPacing sends n unary calls from a cold start through one
// Pacer, from 1, 8 and 64 goroutines, to a real gRPC server over TLS
// limited by grpclimit to rate per second with a burst, and reports the
// time taken as a multiple of the ideal, burst + (n − burst)/rate
// (x-ideal: the burst goes at once), and the calls the server refused (refused). Each iteration is
// a new server and a new Pacer. Run it with -benchtime=1x: an iteration
// takes seconds.
func BenchmarkPacing(b *testing.B) {
	for _, c := range []struct{ rate, burst, n int }{{20, 5, 80}, {100, 10, 500}, {100, 5, 500}} {
		ideal := time.Duration(c.n-c.burst) * time.Second / time.Duration(c.rate)
		for _, workers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("rate=%d/burst=%d/n=%d/goroutines=%d", c.rate, c.burst, c.n, workers), func(b *testing.B) {
				var took time.Duration
				refused := 0
				for range b.N {
					pacer := &grpclimit.Pacer{}
					limit := sluice.GCRA(int64(c.rate), time.Second).WithBurst(int64(c.burst))
					ts := start(b, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("paced", limit)}}},
						grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
					var next atomic.Int64
					var wg sync.WaitGroup
					begin := time.Now()
					for range workers {
						wg.Go(func() {
							for next.Add(1) <= int64(c.n) {
								say(context.Background(), ts.conn, methodSay) // refusals are counted by the server
							}
						})
					}
					wg.Wait()
					took += time.Since(begin)
					refused += ts.refused()
				}
				b.ReportMetric(float64(took)/float64(b.N)/float64(ideal), "x-ideal")
				b.ReportMetric(float64(refused)/float64(b.N), "refused")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
