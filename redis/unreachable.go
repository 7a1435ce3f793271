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
			"hint", "the timeout (store.redis.timeout, Options.Timeout) bounds each decision and each new connection's HELLO, "+
				"and how long a call waits for a new connection's dial and TLS handshake, which go on in the background: "+
				"it must exceed a round trip to Redis, two for a call that makes a new connection to be decided")
	}
	return attrs
}
