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
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/grpclimit"
)

// UNAVAILABLE "is not always safe to retry" (gRPC's codes): a service may
// fail that way after it acted, with a RetryInfo all the same. Retry
// retries it when a limiter refused the call, which then was not served —
// its QuotaFailure says so, as a Server's and sluice serve's refusals by
// global limits carry one — and otherwise only under a policy that
// retries every method (RetryNonIdempotent). RESOURCE_EXHAUSTED with a
// RetryInfo, a quota's refusal, is retried as before.
func TestRetryRetriesUnavailableOnlyWhenALimiterRefusedTheCall(t *testing.T) {
	t.Parallel()
	retryInfo := &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Millisecond)}
	quota := &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "global", QuotaId: "service"}}}
	for _, tc := range []struct {
		name    string
		code    codes.Code
		details []protoadapt.MessageV1
		policy  client.RetryPolicy
		calls   int64
	}{
		{"UNAVAILABLE with RetryInfo alone", codes.Unavailable, []protoadapt.MessageV1{retryInfo}, client.RetryPolicy{}, 1},
		{"UNAVAILABLE with RetryInfo alone, every method retried", codes.Unavailable, []protoadapt.MessageV1{retryInfo},
			client.RetryPolicy{RetryNonIdempotent: true}, 4},
		{"UNAVAILABLE refused by a limiter", codes.Unavailable, []protoadapt.MessageV1{retryInfo, quota}, client.RetryPolicy{}, 4},
		{"RESOURCE_EXHAUSTED with RetryInfo", codes.ResourceExhausted, []protoadapt.MessageV1{retryInfo}, client.RetryPolicy{}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			st, err := status.New(tc.code, "later").WithDetails(tc.details...)
			if err != nil {
				t.Fatal(err)
			}
			invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				calls.Add(1)
				return st.Err()
			}
			retry := grpclimit.NewRetry(tc.policy)
			err = retry.UnaryInterceptor()(context.Background(), "/pkg.Orders/Place", nil, nil, nil, invoker)
			if status.Code(err) != tc.code || calls.Load() != tc.calls {
				t.Errorf("%v after %d attempts, want %v after %d", err, calls.Load(), tc.code, tc.calls)
			}
		})
	}
}
