package grpclimit_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// watchStream (sluice.test.Watch/Watch) is server streaming and long
// lived: it reads a request, sends one event, then stays open until the
// client leaves.
var watchStream = grpc.StreamDesc{StreamName: "Watch", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	if err := ss.SendMsg(in); err != nil {
		return err
	}
	<-ss.Context().Done()
	return nil
}}

const methodWatch = "/sluice.test.Watch/Watch"

// watchThenSay opens a watch on srv through a new Pacer, after a call to
// Say that teaches it the server's quota when learnFirst (else the watch
// is the pacer's first call, its probe), reads the watch's first event,
// and while the watch stays open calls Say with a deadline of within: it
// returns that call's error.
func watchThenSay(t *testing.T, srv *grpc.Server, learnFirst bool, within time.Duration) error {
	t.Helper()
	srv.RegisterService(&grpc.ServiceDesc{ServiceName: "sluice.test.Watch", HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{watchStream}}, nil)
	pacer := &grpclimit.Pacer{}
	conn, err := grpc.NewClient(run(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if learnFirst {
		if _, err := say(context.Background(), conn, methodSay); err != nil {
			t.Fatal(err)
		}
	}

	watching, stop := context.WithCancel(context.Background())
	defer stop()
	cs, err := conn.NewStream(watching, &watchStream, methodWatch)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(wrapperspb.String("w")); err != nil {
		t.Fatal(err)
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err != nil {
		t.Fatalf("the watch's first event: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_, err = say(ctx, conn, methodSay)
	return err
}

// limitedServer is a gRPC server limited by a Server of options o.
func limitedServer(t *testing.T, o httplimit.Options) *grpc.Server {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: o})
	if err != nil {
		t.Fatal(err)
	}
	return grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
}

// A long-lived stream is decided when it opens, and its first message
// proves it admitted: a pacer whose first call is such a stream must not
// hold every later call until the stream ends (its first call is its
// probe, whose answer the others wait for).
func TestPacerDoesNotWaitForALongLivedStreamToEnd(t *testing.T) {
	t.Parallel()
	srv := limitedServer(t, httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(100))}})
	if err := watchThenSay(t, srv, false, 3*time.Second); err != nil {
		t.Errorf("a call while the watch is open: %v (code %v), want it served", err, status.Code(err))
	}
}

// A server that does not limit a stream sends no RateLimit fields in its
// header: a server without limits, or a Server for a client or a method it
// exempts. The header that came with the stream's first message is the
// server's answer all the same, that of a server without limits for the
// stream, as a unary answer without fields is: a pacer whose first call
// is a long-lived watch (a subscription opened at start-up) does not hold
// the calls that follow while the watch is open.
func TestALongLivedStreamTheServerDoesNotLimitDoesNotHoldTheOtherCalls(t *testing.T) {
	t.Parallel()
	free := []*httplimit.Plan{plan("free", sluice.PerMinute(100))}
	servers := map[string]func(t *testing.T) *grpc.Server{
		"a server without limits": func(*testing.T) *grpc.Server { return grpc.NewServer() },
		"a client the server exempts": func(t *testing.T) *grpc.Server {
			return limitedServer(t, httplimit.Options{Plans: free, ExemptAddresses: []netip.Prefix{prefix("127.0.0.0/8")}})
		},
		"a method the server exempts": func(t *testing.T) *grpc.Server {
			return limitedServer(t, httplimit.Options{Plans: free, Exempt: []string{methodWatch}})
		},
	}
	for name, server := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := watchThenSay(t, server(t), false, 3*time.Second); err != nil {
				t.Errorf("a call while the watch is open: %v (code %v), want it served at once", err, status.Code(err))
			}
		})
	}
}

// A stream of a method a Server exempts holds no slot of the client's
// concurrency quota, as the server does not count it: under a limit of one
// call at a time, which a first call taught the pacer, a call while the
// watch is open is sent at once, not held until the watch ends.
func TestAStreamTheServerDoesNotLimitHoldsNoSlotOfAConcurrencyQuota(t *testing.T) {
	t.Parallel()
	srv := limitedServer(t, httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.Concurrency(1, time.Minute))},
		Exempt: []string{methodWatch}})
	if err := watchThenSay(t, srv, true, 500*time.Millisecond); err != nil {
		t.Errorf("a call while the exempt watch is open: %v (code %v), want it served", err, status.Code(err))
	}
}
