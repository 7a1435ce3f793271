package rlscodec_test

import (
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-dev/sluice/internal/rlscodec"
)

// A request at its Bounds is read as protobuf reads it; one descriptor or
// one entry more and it is marked, saying which bound it passed.
func TestCodecReadsUpToItsBoundsAndMarksWhatIsBeyond(t *testing.T) {
	codec := rlscodec.Codec(rlscodec.Bounds{Descriptors: 3, Entries: 2})
	build := func(descriptors, entries int) *rlsv3.RateLimitRequest {
		req := &rlsv3.RateLimitRequest{Domain: "edge"}
		for range descriptors {
			d := &ratelimitv3.RateLimitDescriptor{}
			for range entries {
				d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: "k", Value: "v"})
			}
			req.Descriptors = append(req.Descriptors, d)
		}
		return req
	}
	for _, tc := range []struct {
		name                 string
		descriptors, entries int
		want                 string // "": read
	}{
		{"at both bounds", 3, 2, ""},
		{"a descriptor more", 4, 2, "4 descriptors, more than 3 in one request"},
		{"an entry more", 3, 3, "descriptor 0: 3 entries, more than 2"},
		{"both", 4, 3, "4 descriptors, more than 3 in one request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := build(tc.descriptors, tc.entries)
			b, err := proto.Marshal(sent)
			if err != nil {
				t.Fatal(err)
			}
			var req rlsv3.RateLimitRequest
			if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
				t.Fatal(err)
			}
			err = rlscodec.DecodeError(&req)
			switch {
			case tc.want == "" && (err != nil || !proto.Equal(&req, sent)):
				t.Errorf("read %v (%v), want %v", &req, err, sent)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || len(req.Descriptors) > 0):
				t.Errorf("read %d descriptors, marked %v; want none, marked %q", len(req.Descriptors), err, tc.want)
			}
		})
	}
}
