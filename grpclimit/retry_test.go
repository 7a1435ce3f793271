package grpclimit_test

import (
	"context"
	"math"
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

// A RetryInfo delay longer than any wait (a server's "do not come back":
// here the longest a google.protobuf.Duration holds, 10,000 years, which is
// beyond time.Duration's range) is a wait beyond MaxWait: the refusal is
// returned at once, never retried as if the wait, plus its jitter, were
// over.
func TestRetryDoesNotRetryAfterADelayBeyondAnyWait(t *testing.T) {
	t.Parallel()
	const maxSeconds = 315_576_000_000 // google.protobuf.Duration's bound
	for name, delay := range map[string]*durationpb.Duration{
		"beyond time.Duration":        {Seconds: maxSeconds},
		"just within time.Duration":   durationpb.New(time.Duration(math.MaxInt64)),
		"within it, until its jitter": durationpb.New(time.Duration(math.MaxInt64 / 11 * 10)),
	} {
		refusal, err := status.New(codes.ResourceExhausted, "never again").WithDetails(&errdetails.RetryInfo{RetryDelay: delay})
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			calls++
			return refusal.Err()
		}
		retry := grpclimit.NewRetry(client.RetryPolicy{MaxRetries: 3})
		for range 20 { // the jitter is random: an overflow needs a positive one
			calls = 0
			err := retry.UnaryInterceptor()(context.Background(), "/pkg.S/M", nil, nil, nil, invoker)
			if status.Code(err) != codes.ResourceExhausted || calls != 1 {
				t.Fatalf("%s: %v after %d calls, want the refusal after 1", name, err, calls)
			}
		}
	}
}
