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
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// A Pacer's first call, its probe, that fails on the client's side before
// it is sent (grpc-go refuses a message above MaxCallSendMsgSize with a
// RESOURCE_EXHAUSTED of its own: no details, no metadata) got no answer
// of the server: read as one without RateLimit fields, it would teach the
// Pacer that the server has no limits, and the batch after it would go out
// unpaced into a spent quota. The batch after it is paced.
func TestACallThatFailsBeforeItIsSentDoesNotOpenThePacer(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{MaxWait: 200 * time.Millisecond}
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.FixedWindow(3, time.Minute))},
	}}, grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	err := ts.conn.Invoke(context.Background(), methodSay, wrapperspb.String("a message larger than one byte"),
		new(wrapperspb.StringValue), grpc.MaxCallSendMsgSize(1))
	if status.Code(err) != codes.ResourceExhausted || len(ts.decisions()) != 0 {
		t.Fatalf("first call: %v, %d decisions; want a client-side RESOURCE_EXHAUSTED that reached no server", err, len(ts.decisions()))
	}
	if admitted, paced, refused := pacedBatch(ts.conn, 8); admitted != 3 || refused != 0 {
		t.Errorf("of 8 calls after one that failed before it was sent, %d admitted, %d held by the pacer, %d refused by the server; want 3, 5, 0",
			admitted, paced, refused)
	}
}

// A call whose per-RPC credentials fail is not sent; grpc-go fails it with
// the credentials' own status, UNAUTHENTICATED here, a code a server might
// answer too, but with none of the metadata a server's answer carries. As
// a Pacer's first call, it says nothing of the server's limits, and the
// batch after it is paced.
func TestACallWhoseCredentialsFailDoesNotOpenThePacer(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{MaxWait: 200 * time.Millisecond}
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.FixedWindow(3, time.Minute))},
	}}, grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	err := ts.conn.Invoke(context.Background(), methodSay, wrapperspb.String("hi"), new(wrapperspb.StringValue),
		grpc.PerRPCCredsCallOption{Creds: failingCreds{}})
	if status.Code(err) != codes.Unauthenticated || len(ts.decisions()) != 0 {
		t.Fatalf("first call: %v, %d decisions; want the credentials' UNAUTHENTICATED, with no call sent", err, len(ts.decisions()))
	}
	if admitted, paced, refused := pacedBatch(ts.conn, 8); admitted != 3 || refused != 0 {
		t.Errorf("of 8 calls after one whose credentials failed, %d admitted, %d held by the pacer, %d refused by the server; want 3, 5, 0",
			admitted, paced, refused)
	}
}

// failingCreds are per-RPC credentials that fail every call, UNAUTHENTICATED.
type failingCreds struct{}

func (failingCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return nil, status.Error(codes.Unauthenticated, "no token")
}

func (failingCreds) RequireTransportSecurity() bool { return true }

// A call of a method the server does not serve is answered UNIMPLEMENTED by
// grpc-go before any interceptor runs, trailers-only, without the limits'
// word: as a Pacer's first call, it says nothing of the server's limits,
// and the batch after it is paced.
func TestAnUnimplementedFirstCallDoesNotOpenThePacer(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{MaxWait: 200 * time.Millisecond}
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.FixedWindow(3, time.Minute))},
	}}, grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	if _, err := say(context.Background(), ts.conn, "/sluice.test.Echo/Missing"); status.Code(err) != codes.Unimplemented {
		t.Fatalf("first call: %v; want UNIMPLEMENTED", err)
	}
	if admitted, paced, refused := pacedBatch(ts.conn, 8); admitted != 3 || refused != 0 {
		t.Errorf("of 8 calls after an UNIMPLEMENTED one, %d admitted, %d held by the pacer, %d refused by the server; want 3, 5, 0",
			admitted, paced, refused)
	}
}

// pacedBatch calls Say n times at once on conn and counts the calls
// admitted, those the pacer failed (held beyond its MaxWait) and those the
// server refused.
func pacedBatch(conn *grpc.ClientConn, n int) (admitted, paced, refused int64) {
	var a, p, r atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := say(context.Background(), conn, methodSay)
			switch {
			case err == nil:
				a.Add(1)
			case status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "grpclimit: pacer:"):
				p.Add(1)
			default:
				r.Add(1)
			}
		})
	}
	wg.Wait()
	return a.Load(), p.Load(), r.Load()
}
