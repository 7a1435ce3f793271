package grpclimit

import (
	"context"
	"math"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
)

// pushbackKey is the metadata key of gRPC's retry pushback (gRFC A6), the
// one word of the server that grpc-go's own retries (a service config's
// retryPolicy) heed: they never read RetryInfo.
const pushbackKey = "grpc-retry-pushback-ms"

// noRetry is the pushback that tells a client not to retry at all: gRFC
// A6 reads any negative value so.
const noRetry = "-1"

// PushbackOf returns the value of the grpc-retry-pushback-ms trailer (gRFC
// A6) of st, a limiter's refusal of the call of ctx: the milliseconds a
// client's own retries (a service config's retryPolicy) wait before they
// send the call again, as a decimal integer. It is st's RetryInfo delay
// (its first valid one, as Retry reads it), rounded up to whole
// milliseconds so that the retry comes no earlier than RetryInfo says, and
// "-1", which tells the client not to retry, when no retry within the
// call's life can be admitted: st has no RetryInfo (no wait helps: the
// call costs more than the limit can ever hold), its delay ends at or
// after ctx's deadline (a retry would be sent when the caller has given
// up; the refusal is better returned at once), or it is longer than the
// trailer can say (a signed 32-bit count, 24.8 days). A call without a
// deadline is told the delay however long it is: its retries wait it out.
//
// Server sets it on every refusal, and on nothing else. It is exported for
// a proxy that answers gRPC calls with refusals of its own (sluice serve):
// send it with such a refusal only, never with a failure of the service
// (a transient UNAVAILABLE without RetryInfo would be told never to be
// retried).
func PushbackOf(ctx context.Context, st *status.Status) string {
	delay, ok := retryInfoDelay(st)
	if !ok {
		return noRetry
	}
	ms := delay.Milliseconds()
	if time.Duration(ms)*time.Millisecond < delay {
		ms++
	}
	if ms > math.MaxInt32 {
		return noRetry
	}
	if dl, hasDeadline := ctx.Deadline(); hasDeadline && time.Until(dl) <= time.Duration(ms)*time.Millisecond {
		return noRetry
	}
	return strconv.FormatInt(ms, 10)
}

// retryInfoDelay returns the delay of st's first valid RetryInfo, never
// negative; ok is false when st has none.
func retryInfoDelay(st *status.Status) (delay time.Duration, ok bool) {
	for _, d := range st.Details() {
		if ri, isRetryInfo := d.(*errdetails.RetryInfo); isRetryInfo && ri.GetRetryDelay().IsValid() {
			return max(ri.GetRetryDelay().AsDuration(), 0), true
		}
	}
	return 0, false
}
