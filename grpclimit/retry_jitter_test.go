package grpclimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/grpclimit"
)

// Whether a refusal is retried depends on the server's RetryInfo delay,
// not on Retry's own jitter: a delay within MaxWait (here equal to it) is
// retried every time, the jittered wait cut to MaxWait, as a
// client.Transport of the same policy retries it.
func TestARetryInfoDelayWithinMaxWaitIsRetriedWhateverItsJitter(t *testing.T) {
	t.Parallel()
	const wait = 100 * time.Millisecond
	st, err := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)})
	if err != nil {
		t.Fatal(err)
	}
	retry := grpclimit.NewRetry(client.RetryPolicy{MaxWait: wait, BudgetRatio: -1})
	for range 5 { // the jitter is random: each refusal is retried
		var calls atomic.Int64
		invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			if calls.Add(1) == 1 {
				return st.Err()
			}
			return nil
		}
		begin := time.Now()
		err = retry.UnaryInterceptor()(context.Background(), "/pkg.S/M", nil, nil, nil, invoker)
		took := time.Since(begin)
		if err != nil || calls.Load() != 2 {
			t.Fatalf("%v after %d calls; want the call retried once after the %v RetryInfo delay, which is within MaxWait %v",
				err, calls.Load(), wait, wait)
		}
		if took < wait {
			t.Fatalf("retried after %v, before the RetryInfo delay of %v", took, wait)
		}
	}
}
