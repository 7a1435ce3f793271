package grpclimit_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A limit counting only failures counts the calls whose status is not OK:
// calls that succeed are refunded when they end, however many.
func TestCountOnlyFailedCalls(t *testing.T) {
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	defer store.Close()
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Hour).Named("errors")}}},
		Count: map[string]string{"errors": httplimit.CountFailures},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}})
	call := func(fail bool) codes.Code {
		_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, func(context.Context, any) (any, error) {
			if fail {
				return nil, status.Error(codes.Unavailable, "down")
			}
			return "ok", nil
		})
		return status.Code(err)
	}
	for i := range 5 {
		if c := call(false); c != codes.OK {
			t.Fatalf("successful call %d: %v, want OK: successes are refunded", i, c)
		}
	}
	for i, want := range []codes.Code{codes.Unavailable, codes.Unavailable, codes.ResourceExhausted} {
		if c := call(true); c != want {
			t.Fatalf("failing call %d: %v, want %v", i, c, want)
		}
	}
}

// A list of statuses picks codes by gRPC's HTTP mapping: "status:401"
// counts the Unauthenticated calls alone (a credential-guessing guard),
// neither successes nor other failures.
func TestCountCallsByStatusList(t *testing.T) {
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	defer store.Close()
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Hour).Named("guesses")}}},
		Count: map[string]string{"guesses": httplimit.CountStatus + "401"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}})
	call := func(c codes.Code) codes.Code {
		_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, func(context.Context, any) (any, error) {
			return nil, status.Error(c, "answer")
		})
		return status.Code(err)
	}
	for _, c := range []codes.Code{codes.OK, codes.NotFound, codes.Unavailable, codes.PermissionDenied, codes.OK} {
		if got := call(c); got != c {
			t.Fatalf("a %v call: %v; want it served: only Unauthenticated counts", c, got)
		}
	}
	for i, want := range []codes.Code{codes.Unauthenticated, codes.Unauthenticated, codes.ResourceExhausted} {
		if got := call(codes.Unauthenticated); got != want {
			t.Fatalf("unauthenticated call %d: %v, want %v", i, got, want)
		}
	}
}

// A limit counting what the answer reports settles each call to the tokens
// its handler puts in the x-usage-tokens trailer (grpc.SetTrailer in a
// unary handler, SetTrailer on a stream): a call reserves its method's
// cost, 40, and gets back what it did not use.
func TestCountTheUsageHandlersReport(t *testing.T) {
	t.Parallel()
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Hour).Named("tokens")},
			Costs: map[string]int64{"POST " + methodUse: 40, "POST " + methodConsume: 40}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
	}})
	ctx := context.Background()
	use := func(n string) codes.Code {
		return status.Code(ts.conn.Invoke(ctx, methodUse, wrapperspb.String(n), new(wrapperspb.StringValue)))
	}
	consume := func(n string) codes.Code {
		cs, err := ts.conn.NewStream(ctx, &consumeStream, methodConsume)
		if err == nil {
			err = cs.SendMsg(wrapperspb.String(n))
		}
		if err == nil {
			err = cs.CloseSend()
		}
		for err == nil {
			err = cs.RecvMsg(new(wrapperspb.StringValue))
		}
		if err == io.EOF {
			return codes.OK
		}
		return status.Code(err)
	}
	// 100 tokens: 10, 30, 20 and 35 used (95); the next call cannot reserve
	// 40 of the 5 left.
	for i, c := range []codes.Code{use("10"), consume("30"), use("20"), consume("35"), use("1")} {
		if want := []codes.Code{codes.OK, codes.OK, codes.OK, codes.OK, codes.ResourceExhausted}[i]; c != want {
			t.Fatalf("call %d: %v, want %v", i, c, want)
		}
	}
}

// A handler that returns its context's error, wrapped or not, answers the
// caller DEADLINE_EXCEEDED or CANCELED (grpc-go's server says so, not
// UNKNOWN), and a list of statuses counts it as that code: "status:504"
// counts the calls that ran out of time.
func TestCountsAHandlersContextErrorAsTheCodeTheCallerGets(t *testing.T) {
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	defer store.Close()
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(2, time.Hour).Named("timeouts")}}},
		Count: map[string]string{"timeouts": httplimit.CountStatus + "504"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}})
	call := func() codes.Code {
		_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodSay}, func(context.Context, any) (any, error) {
			return nil, fmt.Errorf("query: %w", context.DeadlineExceeded)
		})
		return status.Code(err)
	}
	for i, want := range []codes.Code{codes.Unknown, codes.Unknown, codes.ResourceExhausted} {
		// Unknown here is the plain error, which grpc-go's server sends as
		// DEADLINE_EXCEEDED.
		if got := call(); got != want {
			t.Fatalf("call %d timing out: %v, want %v: the two before count as 504", i, got, want)
		}
	}
}
