package grpclimit

import (
	"context"
	"testing"
	"time"
)

// The wait before a retry is the RetryInfo delay, never less, plus a
// jitter cut to end by MaxWait and to at most half of what the call's
// deadline leaves after the delay; a delay that ends at the deadline is
// not retried at all. A retry thus never leaves at the deadline, where it
// could not be answered.
func TestRetryWaitLeavesTheRetryTimeToBeAnswered(t *testing.T) {
	const delay = time.Second
	cases := []struct {
		name             string
		maxWait, timeout time.Duration // timeout 0: no deadline
		jitter           time.Duration
		least, most      time.Duration
	}{
		{"a jitter within every bound is kept whole", time.Minute, 0, 100 * time.Millisecond, 1100 * time.Millisecond, 1100 * time.Millisecond},
		{"the jitter is cut to end by MaxWait", 1050 * time.Millisecond, 0, 100 * time.Millisecond, 1050 * time.Millisecond, 1050 * time.Millisecond},
		{"the jitter is cut to half of what the deadline leaves after the delay", time.Minute, 1010 * time.Millisecond, 100 * time.Millisecond, delay, 1005 * time.Millisecond},
		{"a delay that fills the deadline but for a trace is waited out, no more", time.Minute, delay + time.Microsecond, 100 * time.Millisecond, delay, delay + time.Microsecond/2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, c.timeout)
				defer cancel()
			}
			if got := retryWait(ctx, delay, c.maxWait, c.jitter); got < c.least || got > c.most {
				t.Errorf("retryWait = %v, want within [%v, %v]", got, c.least, c.most)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), delay)
	defer cancel()
	if fits(ctx, delay, time.Minute) {
		t.Errorf("a delay that ends at the deadline fits; want it not retried (the retry would leave at the deadline)")
	}
}
