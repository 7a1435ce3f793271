package envoy_test

import (
	"context"
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/sluice-dev/sluice/envoy"
)

// A request beyond MaxDescriptors descriptors, or with a descriptor beyond
// MaxEntries entries, is refused as the codec reads it, before it builds
// a message per descriptor or entry: a megabyte of empty descriptors (half
// a million of them, 70 MB of messages once read) costs the service no
// more than a request within the bounds, and is answered InvalidArgument,
// as the service answers such a request however it arrives.
func TestCodecRefusesARequestBeyondTheBoundsAsItReadsIt(t *testing.T) {
	h := serve(t, apiRules)
	domain := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "api")
	descriptors := append([]byte(nil), domain...)
	for len(descriptors) < 1<<20 {
		descriptors = protowire.AppendBytes(protowire.AppendTag(descriptors, 2, protowire.BytesType), nil)
	}
	var entries []byte
	for len(entries) < 1<<20 {
		entries = protowire.AppendBytes(protowire.AppendTag(entries, 1, protowire.BytesType), nil)
	}
	deep := protowire.AppendBytes(protowire.AppendTag(append([]byte(nil), domain...), 2, protowire.BytesType), entries)
	codec := envoy.Codec()
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"half a million descriptors", descriptors, "descriptors, more than 64 in one request"},
		{"a descriptor of half a million entries", deep, "524288 entries, more than 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req rlsv3.RateLimitRequest
			allocs := testing.AllocsPerRun(1, func() {
				req.Reset()
				if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(tc.data)}, &req); err != nil {
					t.Fatalf("the codec refused to read: %v", err)
				}
			})
			if allocs > 100 {
				t.Errorf("reading it made %.0f allocations, want a few", allocs)
			}
			_, err := h.svc.ShouldRateLimit(context.Background(), &req)
			if st, _ := grpcstatus.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tc.want) {
				t.Errorf("answered %v, want InvalidArgument saying %q", err, tc.want)
			}
		})
	}
}
