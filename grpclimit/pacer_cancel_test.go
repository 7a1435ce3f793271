package grpclimit_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// slowEndStream (server streaming) sends one message back, holds the
// stream until its context ends, and winds up for 300 ms (a flush, a
// cleanup) before it returns.
var slowEndStream = grpc.StreamDesc{StreamName: "Hold", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	if err := ss.SendMsg(in); err != nil {
		return err
	}
	<-ss.Context().Done()
	time.Sleep(300 * time.Millisecond)
	return nil
}}

var slowEndService = grpc.ServiceDesc{
	ServiceName: "sluice.test.SlowEnd",
	HandlerType: (*any)(nil),
	Streams:     []grpc.StreamDesc{slowEndStream},
}

// docs/grpc.md: "An admitted call holds its concurrency leases until its
// handler returns". A stream whose caller cancels it is not counted as
// ended at once (Send.End), but as cut short (Send.Cut): the server may
// serve it still, and its slot is learned anew by a probe after the
// quota's reset, as a body closed before its end is. A call made once
// the stream holding the one slot is cancelled waits for that probe,
// rather than going into the slot while the handler winds up, into
// RESOURCE_EXHAUSTED.
func TestACancelledStreamsSlotIsNotReusedBeforeTheServerFreesIt(t *testing.T) {
	store := memory.New(memory.WithClockResolution(0))
	defer store.Close()
	var refused atomic.Int64
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.Concurrency(1, time.Minute))},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil && !res.Decision.Allowed {
				refused.Add(1)
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	srv.RegisterService(&slowEndService, nil)
	srv.RegisterService(&echoService, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()
	pacer := &grpclimit.Pacer{MaxWait: 5 * time.Second}
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the quota
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cs, err := conn.NewStream(ctx, &slowEndStream, "/sluice.test.SlowEnd/Hold")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(wrapperspb.String("x")); err != nil {
		t.Fatal(err)
	}
	cs.CloseSend()
	if err := cs.RecvMsg(new(wrapperspb.StringValue)); err != nil {
		t.Fatal(err)
	}
	cancel() // the caller is done with the stream; its handler winds up for 300 ms
	_, err = say(context.Background(), conn, methodSay)
	if n := refused.Load(); n > 0 || status.Code(err) == codes.ResourceExhausted {
		t.Errorf("a call made once the stream holding the one slot was cancelled: %v, the server refused %d; want it held until a probe after the quota's reset, the handler returned by then", err, n)
	}
}
