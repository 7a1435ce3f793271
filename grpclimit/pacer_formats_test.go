package grpclimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// A Server may send its RateLimit fields in any of the formats httplimit
// writes; a Pacer reads them from the metadata as client.Transport reads
// them from an HTTP response's header. Against a fixed window, a batch
// paced by the fields of draft 7, draft 6 or the X-RateLimit-* names
// meets at most the one refusal a window costs (see docs/client.md), and
// one paced by a bucket's fields none.
func TestPacerLearnsFromEveryFormatOfTheFields(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{httplimit.ModeDraft7, httplimit.ModeDraft6, httplimit.ModeLegacy} {
		for _, c := range []struct {
			name  string
			limit sluice.Limit
			most  int
		}{
			{"a fixed window", sluice.FixedWindow(5, time.Second), 1},
			{"a bucket", sluice.GCRA(10, time.Second).WithBurst(3), 0},
		} {
			t.Run(mode+" "+c.name, func(t *testing.T) {
				t.Parallel()
				testPacerAgainst(t, mode, c.limit, c.most, false)
			})
			t.Run(mode+" "+c.name+" streams", func(t *testing.T) {
				t.Parallel()
				testPacerAgainst(t, mode, c.limit, c.most, true)
			})
		}
	}
}

// testPacerAgainst sends 16 calls (streams when streams) through a Pacer
// from 4 goroutines to a Server of limit sending the fields in mode, and
// fails when more than most are refused.
func testPacerAgainst(t *testing.T, mode string, limit sluice.Limit, most int, streams bool) {
	const calls = 16
	pacer := &grpclimit.Pacer{}
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Headers: []string{mode},
		Plans: []*httplimit.Plan{plan("free", limit)}}},
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	var wg sync.WaitGroup
	var next, failed atomic.Int64
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= calls {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if _, err := say(ctx, ts.conn, methodSay); err != nil {
					failed.Add(1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	if n := ts.refused(); n > most {
		t.Errorf("the server refused %d of %d calls; want at most %d", n, len(ts.decisions()), most)
	}
	if n := failed.Load(); n > int64(most) {
		t.Errorf("%d of %d calls failed; want at most the %d refused", n, calls, most)
	}
}
