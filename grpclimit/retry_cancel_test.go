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

// A caller that cancels its call while Retry waits out a RetryInfo delay
// gets CANCELED, as from grpc-go's own retries and from a Pacer's wait,
// not the refusal it no longer waits for.
func TestRetryAnswersACallCancelledDuringItsWaitWithCanceled(t *testing.T) {
	t.Parallel()
	refusal, err := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		calls++
		return refusal.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	var r grpclimit.Retry
	err = r.UnaryInterceptor()(ctx, "/pkg.S/M", nil, nil, nil, invoker)
	if status.Code(err) != codes.Canceled || calls != 1 {
		t.Errorf("%v (code %v) after %d calls, want CANCELED after 1", err, status.Code(err), calls)
	}
}
