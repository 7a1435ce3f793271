package grpclimit_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A limit counting only failures counts the calls whose status is not OK:
// calls that succeed are refunded when they end, however many.
func TestCountOnlyFailedCalls(t *testing.T) {
	store := memory.New()
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
	store := memory.New()
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
