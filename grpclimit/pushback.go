package grpclimit

import (
	"context"
	"math"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/quota"
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
// Server sets it on every refusal, and on nothing else, later by a jitter
// under Limits.RetryJitter (see Options.Limits). It is exported for a
// proxy that answers gRPC calls with refusals of its own (sluice serve):
// send it with such a refusal only, never with a failure of the service
// (a transient UNAVAILABLE without RetryInfo would be told never to be
// retried). It is exact: grpc-go's retries of clients refused together
// come back together unless st's delay is itself spread (sluice serve's
// is Retry-After, spread by response.retry_jitter).
func PushbackOf(ctx context.Context, st *status.Status) string {
	ms, _, ok := exactPushback(ctx, st)
	if !ok {
		return noRetry
	}
	return strconv.FormatInt(ms, 10)
}

// pushback returns the grpc-retry-pushback-ms of st, s's refusal of the
// call of ctx decided by res: PushbackOf's, later by a jitter of whole
// milliseconds in [0, span], span being Limits.RetryJitter or a tenth of
// the pushback, whichever is shorter. grpc-go's retries come back exactly
// at the pushback (gRFC A6 adds no jitter of its own), so clients refused
// together, every client of an hourly window say, would come back in the
// same millisecond. The jitter is a hash of the client's subject and the
// second it is told to come back at, as httplimit's RetryJitter is. It is
// cut so that a pushback that ends before ctx's deadline still does,
// leaving at least half of what the deadline leaves after the exact one
// (as Retry cuts its own jitter), and stays within the trailer's 32 bits.
// RetryInfo stays exact: Retry adds a jitter of its own.
func (s *Server) pushback(ctx context.Context, st *status.Status, res *httplimit.Result) string {
	ms, room, ok := exactPushback(ctx, st)
	if !ok {
		return noRetry
	}
	if span := min(s.jitter.Milliseconds(), ms/10, room); span > 0 {
		at := res.Now.Add(time.Duration(ms) * time.Millisecond).Unix()
		ms += int64(quota.ComebackHash(res.Identity.Subject, at) % uint64(span+1))
	}
	return strconv.FormatInt(ms, 10)
}

// exactPushback returns st's RetryInfo delay rounded up to whole
// milliseconds, and room, the most milliseconds it may be made longer by
// and still end before ctx's deadline with half of what that leaves after
// it, within the trailer's 32 bits; ok is false when the pushback is -1
// (see PushbackOf).
func exactPushback(ctx context.Context, st *status.Status) (ms, room int64, ok bool) {
	delay, ok := retryInfoDelay(st)
	if !ok {
		return 0, 0, false
	}
	ms = delay.Milliseconds()
	if time.Duration(ms)*time.Millisecond < delay {
		ms++
	}
	if ms > math.MaxInt32 {
		return 0, 0, false
	}
	room = math.MaxInt32 - ms
	if dl, hasDeadline := ctx.Deadline(); hasDeadline {
		left := time.Until(dl) - time.Duration(ms)*time.Millisecond
		if left <= 0 {
			return 0, 0, false
		}
		room = min(room, left.Milliseconds()/2)
	}
	return ms, room, true
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
