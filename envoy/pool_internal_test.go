package envoy

import (
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// A request beyond the bounds (refused as InvalidArgument) is not kept for
// the next call: a megabyte of empty descriptors decodes to a quarter of a
// million messages, which the pool would otherwise hold.
func TestAnOversizedRequestIsNotPooled(t *testing.T) {
	s := &Service{}
	descriptors := func(n, entries int) *rlsv3.RateLimitRequest {
		req := &rlsv3.RateLimitRequest{}
		for range n {
			d := &ratelimitv3.RateLimitDescriptor{}
			for range entries {
				d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: "k", Value: "v"})
			}
			req.Descriptors = append(req.Descriptors, d)
		}
		return req
	}
	for _, tc := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
		kept bool
	}{
		{"a request within the bounds is kept", descriptors(MaxDescriptors, MaxEntries), true},
		{"more descriptors than MaxDescriptors", descriptors(MaxDescriptors+1, 1), false},
		{"more entries than MaxEntries", descriptors(1, MaxEntries+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := false
			for range 20 { // the race detector's pool drops some puts
				s.releaseRequest(tc.req)
				got, _ := s.requests.Get().(*rlsv3.RateLimitRequest)
				kept = kept || got == tc.req
			}
			if kept != tc.kept {
				t.Errorf("pooled: %v, want %v", kept, tc.kept)
			}
		})
	}
}
