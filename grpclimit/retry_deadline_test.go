package grpclimit_test

import (
	"context"
	"sync"
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

// A RetryInfo delay within the call's deadline is retried while the retry
// can still be answered (docs/grpc.md): Retry's jitter is cut to at most
// half of what the deadline leaves after the delay, so the retry never
// goes out at the deadline to fail DEADLINE_EXCEEDED, the refusal lost.
// Here a delay of 5s on calls with 5.3s left, whose server answers in
// 2ms: the retry leaves 150ms or more before the deadline, room for a
// loaded machine's late timers. The jitter is random (up to 500ms, which a
// wait not cut would push past the deadline 40 times in 100), so eight
// calls are made at once.
func TestARetryWithinTheDeadlineLeavesTimeToBeAnswered(t *testing.T) {
	t.Parallel()
	const delay, slack, answerTime = 5 * time.Second, 300 * time.Millisecond, 2 * time.Millisecond
	refusal, err := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		t.Fatal(err)
	}
	retry := grpclimit.NewRetry(client.RetryPolicy{BudgetRatio: -1})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			var calls atomic.Int64
			var left atomic.Int64
			// A call sent with less than answerTime left of its deadline
			// fails as grpc-go fails it, DEADLINE_EXCEEDED.
			invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				if calls.Add(1) == 1 {
					return refusal.Err()
				}
				dl, _ := ctx.Deadline()
				if left.Store(int64(time.Until(dl))); time.Duration(left.Load()) < answerTime {
					return status.Error(codes.DeadlineExceeded, "context deadline exceeded")
				}
				return nil
			}
			ctx, cancel := context.WithTimeout(context.Background(), delay+slack)
			defer cancel()
			err := retry.UnaryInterceptor()(ctx, "/pkg.S/M", nil, nil, nil, invoker)
			if status.Code(err) == codes.DeadlineExceeded {
				t.Errorf("call %d: %v after %d invocations (the retry went out with %v left of its deadline); want it retried "+
					"while it can be answered, as the %v RetryInfo delay fits in the %v it had, or the refusal returned at once",
					i+1, err, calls.Load(), time.Duration(left.Load()), delay, delay+slack)
			}
		})
	}
	wg.Wait()
}
