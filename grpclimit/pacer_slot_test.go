package grpclimit_test

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/sluice-dev/sluice/grpclimit"
)

// openStream is a server-streaming call admitted by a concurrency limit
// of one stream (its header, with its first message, says so) that sends
// messages until it is closed.
type openStream struct {
	grpc.ClientStream
	closed chan struct{}
}

func (s *openStream) Header() (metadata.MD, error) {
	return metadata.Pairs("ratelimit-policy", `"streams";q=1;qu="concurrent-requests"`, "ratelimit", `"streams";r=0`), nil
}
func (s *openStream) Trailer() metadata.MD { return nil }
func (s *openStream) RecvMsg(any) error {
	select {
	case <-s.closed:
		return io.EOF
	default:
		return nil
	}
}

// A stream admitted by a concurrency limit holds its slot while it lasts,
// though its header finished the pacer's Send (so that a long stream does
// not keep the pacer's probe out): a call while it is open waits for the
// slot, which its end gives back.
func TestAnOpenStreamHoldsItsSlotOfAConcurrencyQuota(t *testing.T) {
	t.Parallel()
	pacer := &grpclimit.Pacer{}
	desc := &grpc.StreamDesc{StreamName: "Count", ServerStreams: true}
	stream := &openStream{closed: make(chan struct{})}
	open := func(ctx context.Context) (grpc.ClientStream, error) {
		return pacer.StreamInterceptor()(ctx, desc, nil, methodCount,
			func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				return stream, nil
			})
	}
	cs, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(nil); err != nil { // the first message, with the header
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := open(ctx); err == nil {
		t.Fatal("a second stream was let through while the only slot's stream is open")
	}
	close(stream.closed)
	if err := cs.RecvMsg(nil); err != io.EOF {
		t.Fatalf("the stream's end: %v, want io.EOF", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, err := open(ctx2); err != nil {
		t.Errorf("a stream after the first ended: %v; want it let through", err)
	}
}
