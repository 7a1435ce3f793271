package grpclimit_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// ctxServerStream is a server stream of ctx that sends and receives
// nothing.
type ctxServerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s ctxServerStream) Context() context.Context   { return s.ctx }
func (ctxServerStream) SetHeader(metadata.MD) error  { return nil }
func (ctxServerStream) SendHeader(metadata.MD) error { return nil }
func (ctxServerStream) SetTrailer(metadata.MD)       {}
func (ctxServerStream) SendMsg(any) error            { return nil }
func (ctxServerStream) RecvMsg(any) error            { return nil }

// A call whose caller cancels it, or whose deadline passes, while its
// handler runs gives its slot of a concurrency limit back when the handler
// returns: the next call of the same client is admitted at once, not a
// lease later.
func TestACallThatEndsByItsContextGivesItsConcurrencySlotBack(t *testing.T) {
	t.Parallel()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{
		Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.Concurrency(1, time.Hour))}}})
	if err != nil {
		t.Fatal(err)
	}
	client := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4000}})
	waits := func(ctx context.Context, _ any) (any, error) {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	unary := func(ctx context.Context, handler grpc.UnaryHandler) error {
		_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, handler)
		return err
	}
	stream := func(ctx context.Context, handler grpc.StreamHandler) error {
		return s.StreamInterceptor()(nil, ctxServerStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: methodCount, IsServerStream: true}, handler)
	}
	for _, c := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"unary, cancelled", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(20*time.Millisecond, cancel)
			return unary(ctx, waits)
		}},
		{"unary, past its deadline", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			return unary(ctx, waits)
		}},
		{"stream, cancelled", func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(20*time.Millisecond, cancel)
			return stream(ctx, func(_ any, ss grpc.ServerStream) error { _, err := waits(ss.Context(), nil); return err })
		}},
		{"stream, past its deadline", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			return stream(ctx, func(_ any, ss grpc.ServerStream) error { _, err := waits(ss.Context(), nil); return err })
		}},
	} {
		if err := c.call(client); status.Code(err) != codes.Canceled && status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("%s: %v, want the context's error", c.name, err)
		}
		if err := unary(client, func(context.Context, any) (any, error) { return nil, nil }); err != nil {
			t.Errorf("after a call %s: the next call: %v, want it admitted", c.name, err)
		}
	}
}
