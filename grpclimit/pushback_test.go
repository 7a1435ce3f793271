package grpclimit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
)

// retryingConfig is a service config whose retryPolicy (gRFC A6) retries
// the test service's refusals after 10 ms of its own backoff, up to 4
// attempts in all: what a client of a service commonly sets.
const retryingConfig = `{"methodConfig": [{"name": [{"service": "sluice.test.Echo"}],
	"retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
	"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}}]}`

// pushbackOf is the grpc-retry-pushback-ms trailer of tr, "" when it has
// none, "many" when it has more than one.
func pushbackOf(tr metadata.MD) string {
	switch vs := tr.Get("grpc-retry-pushback-ms"); len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	default:
		return "many"
	}
}

// A refusal tells grpc-go's own retries (a service config's retryPolicy,
// which read the grpc-retry-pushback-ms trailer and never RetryInfo) not
// to retry when no retry within the call's life can be admitted: its
// RetryInfo delay ends after the call's deadline, or it has no RetryInfo
// because no wait helps. The refused call reaches the limiter once, not
// once per attempt of the policy, each decided and counted again.
func TestARefusalTellsGRPCsOwnRetryWhenNotToComeBack(t *testing.T) {
	t.Parallel()
	// Heavy costs 3 units, more than its rule's limit can ever hold (which
	// a program that builds its Options itself can still give).
	heavy := plan("free", sluice.FixedWindow(100, time.Hour))
	heavy.Costs = map[string]int64{methodHeavy: 3}
	bigRule := httplimit.Rule{Name: "big", Paths: []string{methodHeavy}, Key: []string{"route"},
		Limits: []sluice.Limit{sluice.FixedWindow(2, time.Hour).Named("m")}}
	for _, tc := range []struct {
		name   string
		limits httplimit.Options
		// method is called after one call of Say spent what it could, with
		// a deadline (0: none).
		method   string
		deadline time.Duration
	}{
		{"RESOURCE_EXHAUSTED whose delay ends after the deadline",
			httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.FixedWindow(1, time.Hour))}}, methodSay, 300 * time.Millisecond},
		{"UNAVAILABLE under GlobalStatus 503 whose delay ends after the deadline", httplimit.Options{
			Plans:        []*httplimit.Plan{plan("free", sluice.PerMinute(100))},
			Global:       []sluice.Limit{sluice.FixedWindow(1, time.Hour).Named("service")},
			GlobalStatus: http.StatusServiceUnavailable}, methodSay, 300 * time.Millisecond},
		{"a call that costs more than the limit can ever hold",
			httplimit.Options{Plans: []*httplimit.Plan{heavy}, Rules: []httplimit.Rule{bigRule}}, methodHeavy, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startStill(t, grpclimit.Options{Limits: tc.limits}, grpc.WithDefaultServiceConfig(retryingConfig))
			if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			tr, err := say(ctx, ts.conn, tc.method)
			if code := status.Code(err); code != codes.ResourceExhausted && code != codes.Unavailable {
				t.Fatalf("second call: %v, want the refusal", err)
			}
			if got := pushbackOf(tr); got != "-1" {
				t.Errorf("grpc-retry-pushback-ms %q, want -1 (do not retry)", got)
			}
			if refused := ts.refused(); refused != 1 {
				t.Errorf("the refused call reached the limiter %d times (%v), want once", refused, err)
			}
		})
	}
}

// A refusal whose RetryInfo delay ends before the call's deadline tells
// grpc-go's own retries to come back after it (grpc-retry-pushback-ms,
// rounded up to whole milliseconds), not after their own backoff: the
// call is retried once, no earlier than the delay, and admitted. The
// admitted attempt's trailers carry no pushback.
func TestARefusalTellsGRPCsOwnRetryWhenToComeBack(t *testing.T) {
	t.Parallel()
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.GCRA(1, 300*time.Millisecond))}}},
		grpc.WithDefaultServiceConfig(retryingConfig))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := say(ctx, ts.conn, methodSay); err != nil {
		t.Fatal(err)
	}
	tr, err := say(ctx, ts.conn, methodSay)
	if err != nil {
		t.Fatalf("the refused call was not retried to admission: %v", err)
	}
	if got := pushbackOf(tr); got != "" {
		t.Errorf("the admitted attempt carries grpc-retry-pushback-ms %q", got)
	}
	comesBackAfterItsDelay(t, ts.decisions())
}

// comesBackAfterItsDelay checks that decisions are a call admitted, one
// refused, and its one retry admitted no earlier than the refusal's delay.
func comesBackAfterItsDelay(t *testing.T, ds []decision) {
	t.Helper()
	if len(ds) != 3 || !ds[0].allowed || ds[1].allowed || !ds[2].allowed {
		allowed := make([]bool, len(ds))
		for i, d := range ds {
			allowed[i] = d.allowed
		}
		t.Fatalf("decisions admitted %v, want admitted, refused, admitted: the refused call retried once", allowed)
	}
	if waited := ds[2].at.Sub(ds[1].at); waited < ds[1].retryAfter {
		t.Errorf("retried %v after the refusal, before its delay %v", waited, ds[1].retryAfter)
	}
}

// grpclimit's own client side, Retry before Pacer as docs/grpc.md puts
// them, over a connection whose service config retries too: grpc-go's
// retry waits out the pushback and is admitted, so Retry has nothing left
// to do (no second wait, no further attempt), and Pacer, which takes the
// trailer for no field of its own, learns the quota from the admitted
// attempt and holds the next call until it fits.
func TestGRPCsOwnRetryUnderRetryAndPacerComesBackOnce(t *testing.T) {
	t.Parallel()
	ts := start(t, grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{plan("free", sluice.PerSecond(1))}}})
	pacer := &grpclimit.Pacer{}
	paced := ts.dial(grpc.WithDefaultServiceConfig(retryingConfig),
		grpc.WithChainUnaryInterceptor(grpclimit.NewRetry(client.RetryPolicy{}).UnaryInterceptor(), pacer.UnaryInterceptor()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := say(ctx, ts.conn, methodSay); err != nil { // another connection spends the quota
		t.Fatal(err)
	}
	if _, err := say(ctx, paced, methodSay); err != nil {
		t.Fatalf("the refused call was not retried to admission: %v", err)
	}
	comesBackAfterItsDelay(t, ts.decisions())
	if _, err := say(ctx, paced, methodSay); err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if refused := ts.refused(); refused != 1 {
		t.Errorf("%d refusals, want 1: the pacer did not hold the next call until it fit", refused)
	}
}

// PushbackOf is RetryInfo's delay rounded up to whole milliseconds, so
// that a retry comes no earlier; "-1" (do not retry, gRFC A6) when there
// is no RetryInfo, when the delay ends at or after the context's deadline,
// or when it is longer than the trailer's signed 32-bit milliseconds say.
func TestPushbackIsTheRetryInfoDelayOrDoNotRetry(t *testing.T) {
	t.Parallel()
	refusal := func(delay time.Duration) *status.Status {
		st, err := status.New(codes.ResourceExhausted, "refused").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, tc := range []struct {
		name     string
		st       *status.Status
		deadline time.Duration // 0: none
		want     string
	}{
		{"a delay of whole milliseconds", refusal(2 * time.Second), 0, "2000"},
		{"a delay rounded up", refusal(84200 * time.Microsecond), 0, "85"},
		{"a nanosecond more is a millisecond more", refusal(time.Millisecond + 1), 0, "2"},
		{"no delay", refusal(0), 0, "0"},
		{"a delay within the deadline", refusal(time.Second), time.Minute, "1000"},
		{"a delay past the deadline", refusal(time.Second), 500 * time.Millisecond, "-1"},
		{"no deadline, however long the delay", refusal(24 * time.Hour), 0, "86400000"},
		{"a delay beyond 2^31-1 ms", refusal(25 * 24 * time.Hour), 0, "-1"},
		{"no RetryInfo: no wait helps", status.New(codes.ResourceExhausted, "refused"), 0, "-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			if got := grpclimit.PushbackOf(ctx, tc.st); got != tc.want {
				t.Errorf("PushbackOf = %q, want %q", got, tc.want)
			}
		})
	}
}
