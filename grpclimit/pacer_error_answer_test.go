package grpclimit_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// The tests below send a first call, then n at once, through a Pacer to a
// server that sends no RateLimit fields and answers each call after
// holding it for a while, in a way grpc-go sends trailers-only (without a
// header): the server answered every call, so it is one without limits
// and the n calls go together. A Pacer that took such answers for calls
// whose answer never came would stay as fresh as before its first call
// and send every call as its probe, one at a time.

// inFlight counts the calls a server holds at once.
type inFlight struct{ now, peak atomic.Int64 }

// hold holds a call for d.
func (f *inFlight) hold(d time.Duration) {
	n := f.now.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	time.Sleep(d)
	f.now.Add(-1)
}

// notFound answers every unary call NOT_FOUND after holding it in f: the
// usual gRPC error, which grpc-go sends trailers-only.
func notFound(f *inFlight) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		f.hold(60 * time.Millisecond)
		return nil, status.Error(codes.NotFound, "no such thing")
	}
}

// pacedConn is a client connection to srv through a new Pacer.
func pacedConn(t *testing.T, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	return dialPaced(t, run(t, srv), &grpclimit.Pacer{})
}

// together makes one call, then n at once, and fails t unless the server
// held more than one at a time.
func together(t *testing.T, f *inFlight, n int, call func() error) {
	t.Helper()
	if err := call(); err != nil {
		t.Fatalf("first call: %v", err)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := call(); err != nil {
				t.Errorf("call: %v", err)
			}
		})
	}
	wg.Wait()
	if peak := f.peak.Load(); peak < 2 {
		t.Errorf("the server held at most %d of %d calls sent at once; want them together, not one at a time", peak, n)
	}
}

// wantNotFound calls Say on conn and returns an error unless the server
// answered NOT_FOUND.
func wantNotFound(conn *grpc.ClientConn) error {
	if _, err := say(context.Background(), conn, methodSay); status.Code(err) != codes.NotFound {
		return err
	}
	return nil
}

// A server without limits whose calls end in an error it sends
// trailers-only (NOT_FOUND) has answered them: the Pacer does not hold
// the calls that follow.
func TestErrorsOfAServerWithoutLimitsDoNotSerializeItsCalls(t *testing.T) {
	t.Parallel()
	var f inFlight
	conn := pacedConn(t, grpc.NewServer(grpc.ChainUnaryInterceptor(notFound(&f))))
	together(t, &f, 8, func() error { return wantNotFound(conn) })
}

// A server without limits whose handler answers UNAVAILABLE (a dependency
// down) or DEADLINE_EXCEEDED (its own upstream timed out) sends that
// status trailers-only, with its metadata but no RateLimit fields: it
// answered, and so is one without limits, even though such a status may be
// a proxy's own for a call that never reached a limiter, and does not give
// back a slot a Pacer bound by slots holds
// (TestAProxysOwnStatusDoesNotOpenAPacerBoundBySlots).
func TestAHandlersStatusOfAServerWithoutLimitsDoesNotSerializeItsCalls(t *testing.T) {
	t.Parallel()
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded} {
		t.Run(code.String(), func(t *testing.T) {
			var f inFlight
			conn := pacedConn(t, grpc.NewServer(grpc.ChainUnaryInterceptor(
				func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
					f.hold(60 * time.Millisecond)
					return nil, status.Error(code, "a dependency of the handler failed")
				})))
			together(t, &f, 8, func() error {
				if _, err := say(context.Background(), conn, methodSay); status.Code(err) != code {
					return err
				}
				return nil
			})
		})
	}
}

// A handler that sends its header (grpc.SendHeader, here with a trace id)
// and then fails with DEADLINE_EXCEEDED (its own upstream timed out) sends
// its status in trailers with no metadata of their own, and grpc-go hands
// the client none. Its call's context alive, the client did not end it:
// grpc-go makes DEADLINE_EXCEEDED only of the call's deadline, so the
// server answered, and the calls that follow go together, as after the
// same status sent trailers-only (above).
func TestAHandlersDeadlineExceededAfterItsHeaderDoesNotSerializeItsCalls(t *testing.T) {
	t.Parallel()
	var f inFlight
	conn := pacedConn(t, grpc.NewServer(grpc.ChainUnaryInterceptor(afterHeader(&f, 60*time.Millisecond, codes.DeadlineExceeded))))
	together(t, &f, 8, func() error {
		if _, err := say(context.Background(), conn, methodSay); status.Code(err) != codes.DeadlineExceeded {
			return err
		}
		return nil
	})
}

// CANCELLED and UNAVAILABLE without a quota detail after a header, without
// trailers, are what grpc-go gives a call whose stream a peer reset
// (RST_STREAM) or whose connection broke after the header as well: the
// client cannot tell them from the handler's own status, which may or may
// not have been counted, and a fresh Pacer stays fresh, sending each call
// alone as its probe.
func TestCancelledOrUnavailableAfterAHeaderDoNotOpenAFreshPacer(t *testing.T) {
	t.Parallel()
	for _, code := range []codes.Code{codes.Canceled, codes.Unavailable} {
		t.Run(code.String(), func(t *testing.T) {
			t.Parallel()
			var f inFlight
			conn := pacedConn(t, grpc.NewServer(grpc.ChainUnaryInterceptor(afterHeader(&f, 20*time.Millisecond, code))))
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() { say(context.Background(), conn, methodSay) })
			}
			wg.Wait()
			if peak := f.peak.Load(); peak != 1 {
				t.Errorf("%v after a header: the server held %d calls at once; want each sent alone", code, peak)
			}
		})
	}
}

// afterHeader answers every unary call with code, after sending its header
// and holding the call in f for d.
func afterHeader(f *inFlight, d time.Duration, code codes.Code) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := grpc.SendHeader(ctx, metadata.Pairs("x-trace-id", "abc")); err != nil {
			return nil, err
		}
		f.hold(d)
		return nil, status.Error(code, "a dependency of the handler failed")
	}
}

// A sluice Server sends no RateLimit fields to a client its
// ExemptAddresses hold: the handler's NOT_FOUND, sent trailers-only, is
// the answer of a server without limits for that client, as above.
func TestErrorsToAnExemptClientOfAServerDoNotSerializeItsCalls(t *testing.T) {
	t.Parallel()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans:           []*httplimit.Plan{plan("free", sluice.PerMinute(1000))},
		ExemptAddresses: []netip.Prefix{prefix("127.0.0.0/8")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var f inFlight
	conn := pacedConn(t, grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor(), notFound(&f))))
	together(t, &f, 8, func() error { return wantNotFound(conn) })
}

// A server-streaming call that ends OK without a message is answered
// trailers-only too: from a server without limits, such streams go
// together.
func TestEmptyStreamsOfAServerWithoutLimitsDoNotSerializeThem(t *testing.T) {
	t.Parallel()
	var f inFlight
	conn := pacedConn(t, grpc.NewServer(grpc.ChainStreamInterceptor(
		func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := ss.RecvMsg(new(wrapperspb.StringValue)); err != nil {
				return err
			}
			f.hold(60 * time.Millisecond)
			return nil
		})))
	together(t, &f, 8, func() error {
		n, _, err := count(context.Background(), conn)
		if err == nil && n != 0 {
			return fmt.Errorf("%d messages; want none", n)
		}
		return err
	})
}
