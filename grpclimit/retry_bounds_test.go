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

// refusing is an invoker that refuses every call with RESOURCE_EXHAUSTED
// and a RetryInfo of delay, counting the calls.
func refusing(t *testing.T, delay time.Duration, calls *atomic.Int64) grpc.UnaryInvoker {
	t.Helper()
	st, err := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		t.Fatal(err)
	}
	return func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		calls.Add(1)
		return st.Err()
	}
}

// A retry whose RetryInfo delay ends after the call's deadline could not
// be answered in time: the refusal is returned at once, without waiting
// for the deadline.
func TestRetryNeverWaitsPastTheCallsDeadline(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	begin := time.Now()
	err := grpclimit.NewRetry(client.RetryPolicy{}).UnaryInterceptor()(ctx, "/pkg.S/M", nil, nil, nil, refusing(t, 2*time.Second, &calls))
	if took := time.Since(begin); status.Code(err) != codes.ResourceExhausted || calls.Load() != 1 || took > 500*time.Millisecond {
		t.Errorf("%v after %d calls and %v, want the refusal after 1 call, at once", err, calls.Load(), took)
	}
}

// Retries are bounded per call (MaxRetries) and across calls by the
// budget: a server that refuses every call gets at most BudgetFloor +
// BudgetRatio × calls retries, however many each call may make.
func TestRetryIsBoundedByItsBudget(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	retry := grpclimit.NewRetry(client.RetryPolicy{MaxRetries: 5, BudgetFloor: 4, BudgetRatio: 0.1})
	invoker := refusing(t, 0, &calls)
	const n = 20
	for range n {
		if err := retry.UnaryInterceptor()(context.Background(), "/pkg.S/M", nil, nil, nil, invoker); status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("%v, want the refusal", err)
		}
	}
	// Each call adds a tenth of a retry to a budget of at most 4: at most
	// 4 + 2 retries in all.
	if retries := calls.Load() - n; retries > 6 || retries < 4 {
		t.Errorf("%d retries of %d calls, want 4 to 6", retries, n)
	}
}
