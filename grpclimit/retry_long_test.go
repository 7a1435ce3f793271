package grpclimit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/grpclimit"
)

// A RetryInfo delay longer than an hour (a quota spent for the day) is
// honoured whole, never cut short: a call whose deadline or MaxWait it
// passes gets the refusal back at once, rather than a retry an hour
// later, before the delay is over, that the server can only refuse
// again.
func TestRetryNeverRetriesBeforeALongRetryInfoDelay(t *testing.T) {
	t.Parallel()
	const delay = 2 * time.Hour
	for _, c := range []struct {
		name     string
		maxWait  time.Duration
		deadline time.Duration // 0: none
	}{
		{"no MaxWait, a deadline before the delay ends", -1, 90 * time.Minute},
		{"a MaxWait shorter than the delay", 90 * time.Minute, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int64
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.deadline > 0 {
				ctx, cancel = context.WithTimeout(ctx, c.deadline)
				defer cancel()
			}
			time.AfterFunc(time.Second, cancel) // a retry's wait ends here
			retry := grpclimit.NewRetry(client.RetryPolicy{MaxWait: c.maxWait})
			begin := time.Now()
			err := retry.UnaryInterceptor()(ctx, "/pkg.S/M", nil, nil, nil, refusing(t, delay, &calls))
			if took := time.Since(begin); status.Code(err) != codes.ResourceExhausted || calls.Load() != 1 || took > 500*time.Millisecond {
				t.Errorf("%v after %d calls and %v, want the refusal after 1 call, at once", err, calls.Load(), took)
			}
		})
	}
}
