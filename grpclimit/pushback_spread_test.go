package grpclimit_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// refusedPushback makes key's second call of ts (its first spends the
// quota) with ctx and returns the refusal's exact RetryInfo delay in whole
// milliseconds, rounded up, and its grpc-retry-pushback-ms.
func refusedPushback(t *testing.T, ctx context.Context, ts *testServer, key string) (exact, pushback int64) {
	t.Helper()
	if _, err := say(ctx, ts.conn, methodSay, "x-api-key", key); err != nil {
		t.Fatalf("%s's first call: %v", key, err)
	}
	return refusedAgain(t, ctx, ts, key)
}

// refusedAgain is refusedPushback's call of key, refused.
func refusedAgain(t *testing.T, ctx context.Context, ts *testServer, key string) (exact, pushback int64) {
	t.Helper()
	tr, err := say(ctx, ts.conn, methodSay, "x-api-key", key)
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("%s's second call: %v, want the refusal", key, err)
	}
	exact = -1
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay := ri.GetRetryDelay().AsDuration()
			exact = (delay + time.Millisecond - 1).Milliseconds()
		}
	}
	if exact < 0 {
		t.Fatalf("%s's refusal has no RetryInfo", key)
	}
	pushback, err = strconv.ParseInt(pushbackOf(tr), 10, 64)
	if err != nil {
		t.Fatalf("%s's grpc-retry-pushback-ms %q: %v", key, pushbackOf(tr), err)
	}
	return exact, pushback
}

// grpc-go's own retries come back exactly at grpc-retry-pushback-ms (gRFC
// A6 adds no jitter), so under Limits.RetryJitter the pushback is spread:
// clients refused together by an hourly window are told different
// milliseconds, each no earlier than its exact RetryInfo delay (which
// stays exact) and at most a tenth of it later, and a client refused again
// at the same moment is told the same. Without RetryJitter it is exact.
func TestGRPCsOwnRetriesOfClientsRefusedTogetherAreSpread(t *testing.T) {
	t.Parallel()
	for _, jitter := range []time.Duration{0, 5 * time.Minute} {
		t.Run("RetryJitter "+jitter.String(), func(t *testing.T) {
			// The middleware's clock is the store's, still: "at the same
			// moment" is then the same second on both (the jitter hashes
			// the second to come back at, now plus the exact delay).
			ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
				Plans: []*httplimit.Plan{plan("free", sluice.FixedWindow(1, time.Hour))}, AnonymousPlan: "free",
				UnknownKeys: "key", RetryJitter: jitter, Clock: func() time.Time { return stillAt }}})
			ctx := context.Background()
			told := map[int64]string{}
			for _, key := range []string{"alpha", "bravo", "charlie", "delta"} {
				exact, pushback := refusedPushback(t, ctx, ts, key)
				if jitter == 0 && pushback != exact {
					t.Errorf("%s: pushback %d ms without RetryJitter, want the exact %d", key, pushback, exact)
				}
				if pushback < exact || pushback > exact+exact/10 {
					t.Errorf("%s: pushback %d ms, want within [%d, %d]: the exact delay and a tenth of it", key, pushback, exact, exact+exact/10)
				}
				if again, pushbackAgain := refusedAgain(t, ctx, ts, key); again != exact || pushbackAgain != pushback {
					t.Errorf("%s refused again at the same moment: pushback %d ms of %d, want the %d ms of %d it was told", key, pushbackAgain, again, pushback, exact)
				}
				told[pushback] = key
			}
			if jitter > 0 && len(told) == 1 {
				t.Errorf("four clients refused together were all told the same grpc-retry-pushback-ms %v: grpc-go's retries of all of them come back in the same millisecond", told)
			}
		})
	}
}

// The jitter never makes a pushback that ends before the call's deadline
// end at or after it: it is cut to half of what the deadline leaves after
// the exact delay, so the retry leaves with time to be answered (as
// Retry's own jitter is), and the pushback is not turned into -1.
func TestASpreadPushbackStillEndsBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	ts := startOn(t, memory.New(memory.WithClockResolution(0)), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.GCRA(1, 10*time.Second))}, AnonymousPlan: "free",
		UnknownKeys: "key", RetryJitter: time.Hour}})
	const timeout = 11 * time.Second // within the delay and its tenth: the deadline cuts the jitter
	later := 0
	for _, key := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"} {
		func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			exact, pushback := refusedPushback(t, ctx, ts, key)
			if bound := exact + (timeout.Milliseconds()-exact)/2; pushback < exact || pushback > bound {
				t.Errorf("%s: pushback %d ms, want within [%d, %d]: the exact delay and half of what the deadline leaves after it", key, pushback, exact, bound)
			}
			if pushback > exact {
				later++
			}
		}()
	}
	if later == 0 {
		t.Error("no pushback was spread")
	}
}

// Limits.RetryJitter, which spreads the pushback, is refused outside
// [0, httplimit.MaxRetryJitter], as httplimit.New refuses it.
func TestNewRefusesARetryJitterOutOfRange(t *testing.T) {
	t.Parallel()
	for _, jitter := range []time.Duration{-time.Second, httplimit.MaxRetryJitter + time.Second} {
		_, err := grpclimit.New(nil, grpclimit.Options{Limits: httplimit.Options{RetryJitter: jitter}})
		var fe *httplimit.FieldError
		if !errors.As(err, &fe) || fe.Field != "RetryJitter" {
			t.Errorf("RetryJitter %v: %v, want a field error of RetryJitter", jitter, err)
		}
	}
}
