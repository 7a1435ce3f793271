package grpclimit_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice/grpclimit"
)

// The zero Server limits nothing: it serves every call (logging that it
// decided nothing). The zero Retry retries a refusal with RetryInfo by the
// recommended policy. Neither panics.
func TestZeroServerAndRetry(t *testing.T) {
	ctx := context.Background()
	var s grpclimit.Server
	if err := s.Limit(ctx); err != nil {
		t.Errorf("Limit: %v, want the call served", err)
	}
	served := 0
	handler := func(ctx context.Context, req any) (any, error) { served++; return "ok", nil }
	if _, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/pkg.S/M"}, handler); err != nil || served != 1 {
		t.Errorf("UnaryInterceptor: %v, served %d; want served once", err, served)
	}
	refusal, err := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	invoker := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		if calls++; calls == 1 {
			return refusal.Err()
		}
		return nil
	}
	var r grpclimit.Retry
	if err := r.UnaryInterceptor()(ctx, "/pkg.S/M", nil, nil, nil, invoker); err != nil || calls != 2 {
		t.Errorf("zero Retry: %v after %d calls, want the refusal retried once", err, calls)
	}
}
