package redis

import (
	"context"
	"errors"
	"net"
	"time"
)

// unreachableAttrs are the attributes of a log line saying that Redis could
// not be reached, with err: the error and, when err is a timeout, the
// timeout and what it bounds, since a timeout too short for a new
// connection's round trips reads otherwise like a Redis that is down.
// A timeout of 0 says that err's deadline was not the dial's: no hint.
func unreachableAttrs(err error, timeout time.Duration) []any {
	attrs := []any{"err", err}
	var ne net.Error
	if timeout > 0 && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
		attrs = append(attrs, "timeout", timeout,
			"hint", "the timeout (store.redis.timeout, Options.Timeout) bounds each new connection's dial, TLS handshake and HELLO "+
				"as well as each decision: it must exceed 3 round trips to Redis, 4 over TLS 1.3")
	}
	return attrs
}
