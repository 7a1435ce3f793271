package grpclimit

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/client"
)

// Retry is a client interceptor that retries unary calls the server
// refused with a google.rpc.RetryInfo detail: after the delay it gives,
// never before, plus a jitter of up to a tenth of it (so that clients
// refused together do not return together). RESOURCE_EXHAUSTED with a
// RetryInfo is a quota's refusal, and UNAVAILABLE with a RetryInfo and a
// google.rpc.QuotaFailure a limiter's (a Server's by its global limits,
// or sluice serve's): such a call was not served, so it is retried
// whatever the method. UNAVAILABLE without a QuotaFailure may come from a
// service that failed after it acted, which gRPC warns is not always safe
// to retry: it is retried only when the policy's RetryNonIdempotent is
// set. Other errors, refusals without RetryInfo (RESOURCE_EXHAUSTED also
// means "message too large") and streams are returned as they are: a
// stream cannot be replayed.
//
// Retries follow the client.RetryPolicy it was made with: at most
// MaxRetries of one call, none whose RetryInfo delay exceeds MaxWait or
// the call's deadline (the refusal is then returned at once; a delay
// within them is retried, its jitter cut to end by MaxWait and to at most
// half of what the deadline leaves after the delay, so that the retry
// leaves with time to be answered, never at the deadline), and a retry budget
// shared by every call of the Retry. The wait is RetryInfo's whole delay,
// however long: unlike client.Transport, which asks again after an hour
// at most, Retry never retries before the server said it may. A call whose context ends while it
// waits fails with its context's error as a status (CANCELED,
// DEADLINE_EXCEEDED), as grpc-go's own retries do. It is safe for
// concurrent use; use one per client connection or per service called.
// The zero Retry follows the recommended policy, as
// NewRetry(client.RetryPolicy{}) does.
type Retry struct {
	once    sync.Once
	retries *client.Retries
}

// NewRetry returns a Retry following p (its zero value is the recommended
// policy: see client.RetryPolicy).
func NewRetry(p client.RetryPolicy) *Retry {
	return &Retry{retries: client.NewRetries(p)}
}

// policy returns the Retries the Retry follows: NewRetry's, or for the
// zero Retry the recommended policy's.
func (r *Retry) policy() *client.Retries {
	r.once.Do(func() {
		if r.retries == nil {
			r.retries = client.NewRetries(client.RetryPolicy{})
		}
	})
	return r.retries
}

// UnaryInterceptor returns the interceptor. Put it before a Pacer's, so
// that every attempt is paced:
//
//	grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor(), pacer.UnaryInterceptor())
func (r *Retry) UnaryInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		retries := r.policy()
		retries.Call()
		anyFailure := retries.Policy().RetryNonIdempotent
		for retry := 0; ; retry++ {
			err := invoker(ctx, method, req, reply, cc, opts...)
			delay, ok := retryDelay(err, anyFailure)
			if !ok {
				return err
			}
			maxWait := retries.Policy().MaxWait
			if !fits(ctx, delay, maxWait) {
				return err
			}
			// Next holds a server's wait to an hour at most (a probe after
			// it); RetryInfo's delay is waited out whole, as it fits.
			if _, werr := retries.Next(ctx, retry, delay, true); werr != nil {
				return err
			}
			t := time.NewTimer(retryWait(ctx, delay, maxWait, jitter(delay)))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return status.FromContextError(ctx.Err()).Err()
			}
		}
	}
}

// fits says whether a wait of d is within maxWait and ends before ctx's
// deadline (strictly: a retry sent at the deadline cannot be answered).
func fits(ctx context.Context, d, maxWait time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return false
	}
	return d <= maxWait
}

// retryWait is the wait before retrying a call refused with a RetryInfo
// delay that fits (see fits): the delay, never less, plus the jitter j cut
// to end by maxWait and to at most half of what ctx's deadline leaves
// after the delay, so that the retry leaves with time to be answered.
func retryWait(ctx context.Context, delay, maxWait, j time.Duration) time.Duration {
	j = min(j, maxWait-delay)
	if dl, ok := ctx.Deadline(); ok {
		j = min(j, (time.Until(dl)-delay)/2)
	}
	return delay + max(j, 0)
}

// jitter is a jitter for a delay d ≥ 0: uniform in [0, d/10].
func jitter(d time.Duration) time.Duration {
	return time.Duration(rand.Int64N(int64(d/10) + 1))
}

// retryDelay returns the RetryInfo delay of a status error that Retry
// retries: RESOURCE_EXHAUSTED, or UNAVAILABLE with a QuotaFailure (any
// UNAVAILABLE when anyFailure is set); ok is false for any other error.
func retryDelay(err error, anyFailure bool) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	st, isStatus := status.FromError(err)
	if !isStatus || st.Code() != codes.ResourceExhausted && st.Code() != codes.Unavailable {
		return 0, false
	}
	delay, told, refused := time.Duration(0), false, st.Code() == codes.ResourceExhausted || anyFailure
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			if !told && d.GetRetryDelay().IsValid() {
				delay, told = max(d.GetRetryDelay().AsDuration(), 0), true
			}
		case *errdetails.QuotaFailure:
			refused = true
		}
	}
	return delay, told && refused
}
