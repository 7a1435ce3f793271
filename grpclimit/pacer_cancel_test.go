package grpclimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/grpclimit"
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
	var refused atomic.Int64
	addr := concurrencyServerWith(t, 1, concurrencySetup{services: []*grpc.ServiceDesc{&slowEndService}, refused: &refused})
	conn := dialPaced(t, addr, &grpclimit.Pacer{MaxWait: 5 * time.Second})

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
