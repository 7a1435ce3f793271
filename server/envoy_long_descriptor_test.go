package server_test

import (
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// The Envoy service limits a descriptor whatever the length of its value,
// up to what its 1 MiB messages carry: an error answer would let Envoy's
// request through (failure_mode_deny false, its default), so a bound on a
// descriptor's length below the message's would be a way around a limit
// for a client that puts a long value in a header.
func TestEnvoyLimitsDescriptorsOfAnyLengthAMessageCarries(t *testing.T) {
	conn := envoyServer(t)
	for _, n := range []int{70 << 10, 1<<20 - 100} {
		req := &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{descriptor(entry("remote_address", strings.Repeat("x", n)))}}
		for i := 1; i <= 4; i++ {
			resp, err := shouldRateLimit(conn, req)
			want := rlsv3.RateLimitResponse_OK
			if i == 4 { // per-ip: 3 per minute
				want = rlsv3.RateLimitResponse_OVER_LIMIT
			}
			if err != nil || resp.GetOverallCode() != want {
				t.Fatalf("a value of %d bytes, request %d: %v, %v; want %v", n, i, resp.GetOverallCode(), err, want)
			}
		}
	}
}
