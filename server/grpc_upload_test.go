package server_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// uploadDesc is a client-streaming method, as a gRPC upload is: the
// server reads every message to the end, then answers once. grpc-go sends
// the answer's header with that answer, so nothing of the answer starts
// while the client streams.
var uploadDesc = grpc.StreamDesc{StreamName: "Upload", ClientStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
	n := 0
	for {
		if err := ss.RecvMsg(new(wrapperspb.StringValue)); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		n++
	}
	return ss.SendMsg(wrapperspb.String(strconv.Itoa(n)))
}}

var uploadService = grpc.ServiceDesc{ServiceName: "test.Up", HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{uploadDesc}}

// A client-streaming call (or a long upload) lives while it moves data,
// though no answer starts before the client stops sending
// (docs/grpc.md, docs/decisions.md): the listener's write_timeout bounds
// the wait for the answer to start from the request body's end, not from
// the call's opening, where HTTP/2 arms it per stream. Here a call sends
// a message every 100ms for 2.5s through sluice serve (write_timeout 1s,
// read_timeout 1s), its server answering at the end.
func TestClientStreamingCallOutlivesWriteTimeout(t *testing.T) {
	gs := grpc.NewServer()
	gs.RegisterService(&uploadService, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+grpcConfig)
	conn := dialInsecure(t, serveOn(t, srv).public)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := conn.NewStream(ctx, &uploadDesc, "/test.Up/Upload")
	if err != nil {
		t.Fatal(err)
	}
	start, sent := time.Now(), 0
	for time.Since(start) < 2500*time.Millisecond {
		if err := cs.SendMsg(wrapperspb.String("part")); err != nil {
			break // the stream ended: RecvMsg tells why
		}
		sent++
		time.Sleep(100 * time.Millisecond)
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got wrapperspb.StringValue
	if err := cs.RecvMsg(&got); err != nil {
		t.Fatalf("after %v and %d messages sent every 100ms: %v; want the upload answered (write_timeout 1s cut a call that moves messages)",
			time.Since(start).Round(time.Millisecond), sent, err)
	}
	if got.Value != strconv.Itoa(sent) {
		t.Errorf("the upstream counted %s messages, want %d", got.Value, sent)
	}
}
