package grpclimit_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// A call of a method the server exempts (a health check) is answered
// without RateLimit fields. Were it a Pacer's first call, its probe, the
// Pacer would take the server for one without limits and send the batch
// that follows all at once, into a spent quota: an exempt method is sent
// at once and teaches the Pacer nothing, and the batch after it is paced.
func TestAnExemptFirstCallDoesNotTeachThePacerTheServerIsUnlimited(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{MaxWait: 200 * time.Millisecond, Exempt: func(m string) bool { return m == methodHeavy }}
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans:  []*httplimit.Plan{plan("free", sluice.FixedWindow(3, time.Minute))},
		Exempt: []string{methodHeavy},
	}}, grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	if _, err := say(context.Background(), ts.conn, methodHeavy); err != nil {
		t.Fatal(err)
	}
	var admitted, paced, refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := say(context.Background(), ts.conn, methodSay)
			switch {
			case err == nil:
				admitted.Add(1)
			case status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "grpclimit: pacer:"):
				paced.Add(1)
			default:
				refused.Add(1)
				t.Log(err)
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 3 || refused.Load() != 0 {
		t.Errorf("of 8 calls after an exempt one, %d admitted, %d held by the pacer, %d refused by the server; want 3, 5, 0",
			admitted.Load(), paced.Load(), refused.Load())
	}
}

// An exempt stream is opened at once, even while the Pacer holds every
// call after a refusal, and teaches it nothing.
func TestAnExemptStreamIsNotHeldByThePacer(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{MaxWait: 100 * time.Millisecond, Exempt: func(m string) bool { return m == methodCount }}
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans:  []*httplimit.Plan{plan("free", sluice.FixedWindow(1, time.Minute))},
		Exempt: []string{methodCount},
	}}, grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
		t.Fatal(err)
	}
	// Spent: the next call is held beyond MaxWait by the pacer.
	if _, err := say(context.Background(), ts.conn, methodSay); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a second call in the window: %v, want RESOURCE_EXHAUSTED", err)
	}
	for i := range 3 {
		if n, _, err := count(context.Background(), ts.conn); err != nil || n != 3 {
			t.Fatalf("exempt stream %d: %d messages, %v", i, n, err)
		}
	}
}
