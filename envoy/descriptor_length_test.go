package envoy_test

import (
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	"google.golang.org/grpc"
)

// A descriptor is limited whatever the length of its keys and values, up
// to what a message the gRPC server reads can carry: an input bound of the
// service must not be a way around a limit, and Envoy (failure_mode_deny
// false, its default) lets a request through when the service answers it
// with an error. A client that puts a long value in a header that one
// entry reads, beside other entries or in two entries of one descriptor,
// is limited as envoyproxy/ratelimit limits it, under a SHA-256 of its
// entries (Outcome.Subject).
func TestLongDescriptorsAreLimited(t *testing.T) {
	const limit = "per-client:5/MINUTE"
	long := strings.Repeat("x", 70<<10)
	cases := []struct {
		name string
		d    func() *ratelimitv3.RateLimitDescriptor
	}{
		{"one entry longer than 64 KiB", func() *ratelimitv3.RateLimitDescriptor { return desc("client", long) }},
		{"two entries of 40 KiB", func() *ratelimitv3.RateLimitDescriptor {
			return desc("client", long[:40<<10], "path", long[:40<<10])
		}},
		{"a descriptor of nearly a MiB", func() *ratelimitv3.RateLimitDescriptor {
			return desc("client", strings.Repeat("y", 1<<20-100))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := serve(t, `
domain: api
descriptors:
  - key: client
    rate_limit: {name: per-client, unit: minute, requests_per_unit: 5}
    descriptors:
      - key: path
        rate_limit: {name: per-client, unit: minute, requests_per_unit: 5}
`)
			h.client = dialWith(t, h.svc, grpc.MaxRecvMsgSize(1<<20))
			for i := 4; i >= 0; i-- {
				h.expect(h.ask(request("api", 0, c.d())), ok, status{ok, limit, uint32(i), time.Minute})
			}
			h.expect(h.ask(request("api", 0, c.d())), over, status{over, limit, 0, time.Minute})
			h.expect(h.ask(request("api", 0, desc("client", "short"))), ok, status{ok, limit, 4, time.Minute})
		})
	}
}
