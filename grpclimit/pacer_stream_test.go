package grpclimit_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/grpclimit"
)

// collectStream (sluice.test.Sink/Collect) is client streaming: it reads
// strings until the client closes, then answers with the last one.
var collectStream = grpc.StreamDesc{StreamName: "Collect", ClientStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	last := new(wrapperspb.StringValue)
	for {
		in := new(wrapperspb.StringValue)
		err := ss.RecvMsg(in)
		if errors.Is(err, io.EOF) {
			return ss.SendMsg(last)
		}
		if err != nil {
			return err
		}
		last = in
	}
}}

const methodCollect = "/sluice.test.Sink/Collect"

// sinkConn serves sluice.test.Echo and sluice.test.Sink with no limits
// (no RateLimit fields: nothing for a pacer to hold calls by) and returns
// a connection to it through a Pacer's interceptors.
func sinkConn(t *testing.T, pacer *grpclimit.Pacer) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer()
	srv.RegisterService(&grpc.ServiceDesc{ServiceName: "sluice.test.Sink", HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{collectStream}}, nil)
	conn, err := grpc.NewClient(run(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// A paced stream's end is learnt however the stream ends: a client-streaming
// call ends when CloseAndRecv's RecvMsg returns its answer (nil, not
// io.EOF), a stream ends when SendMsg fails on the client's side, and any
// stream ends when its context is cancelled, read or not.
// A stream whose end went unnoticed would stay in flight for ever: the
// pacer's first call is its probe, and every later call would wait for it.
func TestPacerLearnsTheEndOfEveryStream(t *testing.T) {
	t.Parallel()
	ends := map[string]func(t *testing.T, conn *grpc.ClientConn){
		"a client-streaming call answered": func(t *testing.T, conn *grpc.ClientConn) {
			cs, err := conn.NewStream(context.Background(), &collectStream, methodCollect)
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(wrapperspb.String("a")); err != nil {
				t.Fatal(err)
			}
			if err := cs.CloseSend(); err != nil {
				t.Fatal(err)
			}
			out := new(wrapperspb.StringValue)
			if err := cs.RecvMsg(out); err != nil || out.Value != "a" {
				t.Fatalf("CloseAndRecv: %q, %v", out.Value, err)
			}
		},
		"a stream cancelled before it was read": func(t *testing.T, conn *grpc.ClientConn) {
			ctx, cancel := context.WithCancel(context.Background())
			cs, err := conn.NewStream(ctx, &countStream, methodCount)
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg(wrapperspb.String("n")); err != nil {
				t.Fatal(err)
			}
			cancel()
		},
		"a stream whose message could not be sent": func(t *testing.T, conn *grpc.ClientConn) {
			cs, err := conn.NewStream(context.Background(), &collectStream, methodCollect)
			if err != nil {
				t.Fatal(err)
			}
			if err := cs.SendMsg("not a protobuf message"); err == nil {
				t.Fatal("SendMsg of a string: no error, want the codec's")
			}
		},
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn := sinkConn(t, &grpclimit.Pacer{})
			end(t, conn)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := say(ctx, conn, methodSay); err != nil {
				t.Errorf("the call after the stream: %v (code %v), want it served", err, status.Code(err))
			}
		})
	}
}
