package grpclimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/grpclimit"
)

// A proxy in front of a limited service (Envoy's "no healthy upstream",
// "upstream connect error") answers UNAVAILABLE trailers-only by itself:
// content-type in its metadata, no RateLimit fields, no quota detail. The
// call never reached the limiter: it says nothing of the quota, as a
// cached HTTP answer says nothing. It is not the server's end of the call
// (which a Server's RateLimit fields in the trailers would show) but a
// call that may or may not have been counted, and a pacer that knows the
// server's 2 slots keeps 6 slow calls after it to 2 at a time: the server
// refuses none. Taken for an answer without fields, it would have the
// pacer take the server to have stopped limiting and send all 6 at once.
//
// The same of the proxy's DEADLINE_EXCEEDED (Envoy's route timeout, which
// resets the upstream stream while its handler may still hold its slot).
func TestAProxysOwnStatusDoesNotOpenAPacerBoundBySlots(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded} {
		t.Run(code.String(), func(t *testing.T) { proxysStatusDoesNotOpen(t, code) })
	}
}

func proxysStatusDoesNotOpen(t *testing.T, code codes.Code) {
	var refused atomic.Int64
	var down atomic.Bool
	proxy := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if down.CompareAndSwap(true, false) { // the upstream is down for one call
			return nil, status.Error(code, "the proxy's own answer")
		}
		return h(ctx, req)
	}
	slow := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		time.Sleep(200 * time.Millisecond) // holds its slot
		return h(ctx, req)
	}
	addr := concurrencyServerWith(t, 2, concurrencySetup{refused: &refused,
		before: []grpc.UnaryServerInterceptor{proxy}, after: []grpc.UnaryServerInterceptor{slow}})
	conn := dialPaced(t, addr, &grpclimit.Pacer{MaxWait: 10 * time.Second})

	if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the 2 slots
		t.Fatal(err)
	}
	down.Store(true)
	if _, err := say(context.Background(), conn, methodSay); status.Code(err) != code {
		t.Fatalf("the call: %v; want the proxy's %v", err, code)
	}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			say(ctx, conn, methodSay)
		}()
	}
	wg.Wait()
	if n := refused.Load(); n > 0 {
		t.Errorf("6 slow calls after one a proxy answered %v (never reaching the limiter): %d refused by a quota of 2 slots; want none (the pacer still bound to 2 at a time)", code, n)
	}
}
