package grpclimit_test

import (
	"context"
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

// A long-lived stream is decided when it opens, and its first message
// proves it admitted: a pacer whose first call is such a stream must not
// hold every later call until the stream ends (its first call is its
// probe, whose answer the others wait for).
func TestPacerDoesNotWaitForALongLivedStreamToEnd(t *testing.T) {
	t.Parallel()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(100))}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	srv.RegisterService(&grpc.ServiceDesc{ServiceName: "sluice.test.Watch", HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{watchStream}}, nil)
	pacer := &grpclimit.Pacer{}
	conn, err := grpc.NewClient(run(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := say(ctx, conn, methodSay); err != nil {
		t.Errorf("a call while the watch is open: %v (code %v), want it served", err, status.Code(err))
	}
}
