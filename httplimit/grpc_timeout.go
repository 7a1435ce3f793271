package httplimit

import (
	"context"
	"net/http"
	"time"
)

// grpcDeadline returns r with the deadline its grpc-timeout header states
// when r is a gRPC or gRPC-Web call, as a gRPC server sets its calls'
// deadlines, and the function that releases it; otherwise (no header, one
// that is not a grpc-timeout) r itself and a function that does nothing.
// It reads the first grpc-timeout field: Handler has refused a call whose
// fields differ (fieldsReadApart).
// A call whose turn in a queue comes after its deadline is then refused
// at once (see DecideFor), and the upstream it reaches is given up on
// when its caller gives up. A Connect call's Connect-Timeout-Ms sets no
// deadline here: a handler that gives it up (a proxy) would answer no
// Connect error at it, where the service answers deadline_exceeded.
func grpcDeadline(r *http.Request) (*http.Request, context.CancelFunc) {
	vs := r.Header["Grpc-Timeout"] // the canonical key, as net/http stores it
	if len(vs) == 0 || !grpcCall(r) {
		return r, func() {}
	}
	d, ok := parseGRPCTimeout(vs[0])
	if !ok {
		return r, func() {}
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	return r.WithContext(ctx), cancel
}

// parseGRPCTimeout parses a grpc-timeout header: 1 to 8 ASCII digits and
// a unit, H, M, S, m (milliseconds), u (microseconds) or n (nanoseconds),
// as gRPC over HTTP/2 defines it. The duration saturates at the largest
// time.Duration (eight digits of hours pass it).
func parseGRPCTimeout(v string) (time.Duration, bool) {
	if len(v) < 2 || len(v) > 9 {
		return 0, false
	}
	var unit time.Duration
	switch v[len(v)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, false
	}
	var n int64
	for _, c := range []byte(v[:len(v)-1]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	const maxDuration = time.Duration(1<<63 - 1)
	if n > int64(maxDuration/unit) {
		return maxDuration, true
	}
	return time.Duration(n) * unit, true
}
