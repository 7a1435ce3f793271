package httplimit

import (
	"testing"
	"time"
)

// retryAfterSeconds is the wait rounded up to whole seconds, at least 1,
// so that a client that waits exactly that long is admitted: a refusal
// whose wait is 0 or less (a store reporting a refusal with no wait) still
// says 1, never "Retry-After: 0", which invites an immediate retry.
func TestRetryAfterIsAtLeastOneSecond(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{0, 1}, {-time.Second, 1}, {time.Nanosecond, 1}, {time.Second, 1}, {time.Second + 1, 2}} {
		if got := retryAfterSeconds(c.d); got != c.want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}
