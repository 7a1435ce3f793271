package grpclimit_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/grpclimit"
)

// docs/grpc.md: "A stream the server ends (read to its end, or ended by
// its status) gives its slot back at once; one the client ends (its
// context cancelled or past its deadline, a failed SendMsg, a broken
// connection) may be served still until its handler returns". A handler
// that returns an error status of its own (DEADLINE_EXCEEDED when its
// upstream timed out, UNAVAILABLE when a dependency is down, CANCELLED)
// has returned: the server interceptor has given its concurrency lease
// back before the status is sent. The client's context is alive and the
// status came in the server's trailers, with its RateLimit fields: the
// stream is the server's to have ended, and its slot is back at once, not
// held until a probe after the quota's reset (the next call would wait
// about a second for a slot that is free). Only those codes without
// RateLimit fields in their trailers, or with the call's context done,
// are the client's own end.
func TestAStreamEndedByItsHandlersStatusGivesItsSlotBack(t *testing.T) {
	for _, code := range []codes.Code{codes.DeadlineExceeded, codes.Unavailable, codes.Canceled} {
		t.Run(code.String(), func(t *testing.T) {
			failing := grpc.StreamDesc{StreamName: "Fail", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
				in := new(wrapperspb.StringValue)
				if err := ss.RecvMsg(in); err != nil {
					return err
				}
				if err := ss.SendMsg(in); err != nil {
					return err
				}
				return status.Error(code, "the handler's own failure")
			}}
			service := grpc.ServiceDesc{ServiceName: "sluice.test.HandlerStatusStream", HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{failing}}
			var refused atomic.Int64
			addr := concurrencyServerWith(t, 1, concurrencySetup{services: []*grpc.ServiceDesc{&service}, refused: &refused})
			conn := dialPaced(t, addr, &grpclimit.Pacer{MaxWait: 5 * time.Second})

			if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the quota
				t.Fatal(err)
			}
			cs, err := conn.NewStream(context.Background(), &failing, "/sluice.test.HandlerStatusStream/Fail")
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
			if err := cs.RecvMsg(new(wrapperspb.StringValue)); err == io.EOF || status.Code(err) != code {
				t.Fatalf("the stream's end: %v; want the handler's %v", err, code)
			}
			start := time.Now()
			_, err = say(context.Background(), conn, methodSay)
			elapsed := time.Since(start)
			if err != nil || refused.Load() > 0 || elapsed > 500*time.Millisecond {
				t.Errorf("a call after a stream its handler ended with %v (the handler returned, its slot free): %v after %v, %d refused; want it sent at once and admitted",
					code, err, elapsed.Round(time.Millisecond), refused.Load())
			}
		})
	}
}

// The same for a unary call: a handler that returns DEADLINE_EXCEEDED (its
// upstream timed out) has returned, and its answer carries the server's
// trailers with the RateLimit fields of its admission: it is the server's
// answer, not a call that may or may not have been counted, and the
// concurrency quota's one slot is back at once, not thought held until a
// probe after the quota's reset. A status grpc-go makes on the client's
// side comes with no trailers (see answer's doc), and a proxy's own with
// no RateLimit fields (TestAProxysOwnStatusDoesNotOpenAPacerBoundBySlots):
// those are not the server's end.
func TestAUnaryCallEndedByItsHandlersStatusGivesItsSlotBack(t *testing.T) {
	failing := grpc.MethodDesc{MethodName: "Fail", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		fail := func(ctx context.Context, req any) (any, error) {
			return nil, status.Error(codes.DeadlineExceeded, "the upstream timed out")
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/sluice.test.HandlerStatusUnary/Fail"}, fail)
	}}
	service := grpc.ServiceDesc{ServiceName: "sluice.test.HandlerStatusUnary", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{failing}}
	var refused atomic.Int64
	addr := concurrencyServerWith(t, 1, concurrencySetup{services: []*grpc.ServiceDesc{&service}, refused: &refused})
	conn := dialPaced(t, addr, &grpclimit.Pacer{MaxWait: 5 * time.Second})

	if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the quota
		t.Fatal(err)
	}
	var trailer metadata.MD
	err := conn.Invoke(context.Background(), "/sluice.test.HandlerStatusUnary/Fail", wrapperspb.String("x"), new(wrapperspb.StringValue), grpc.Trailer(&trailer))
	if status.Code(err) != codes.DeadlineExceeded || len(trailer.Get("ratelimit")) == 0 {
		t.Fatalf("the failing call: %v, trailers %v; want the handler's DEADLINE_EXCEEDED with the server's RateLimit fields", err, trailer)
	}
	start := time.Now()
	_, err = say(context.Background(), conn, methodSay)
	elapsed := time.Since(start)
	if err != nil || refused.Load() > 0 || elapsed > 500*time.Millisecond {
		t.Errorf("a call after one its handler ended with DEADLINE_EXCEEDED (the handler returned, its slot free): %v after %v, %d refused; want it sent at once and admitted",
			err, elapsed.Round(time.Millisecond), refused.Load())
	}
}
