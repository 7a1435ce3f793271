package rlscodec_test

import (
	"math"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/internal/rlscodec"
)

// FuzzCodecReadsAsProtobuf: reading never fails; whatever protobuf reads,
// the codec reads the same, whole or in two buffers, into a new request or
// into one an earlier input was read into; whatever it cannot read is
// marked for DecodeError. What the codec sends of a response built from the
// request reads back as that response.
func FuzzCodecReadsAsProtobuf(f *testing.F) {
	entry := func(k, v string) *ratelimitv3.RateLimitDescriptor_Entry {
		return &ratelimitv3.RateLimitDescriptor_Entry{Key: k, Value: v}
	}
	for _, req := range []*rlsv3.RateLimitRequest{
		{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{entry("remote_address", "1.2.3.4")}}}},
		{Domain: "edge", HitsAddend: 7, Descriptors: []*ratelimitv3.RateLimitDescriptor{
			{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{entry("tenant", "t"), entry("path", "/login")}, HitsAddend: wrapperspb.UInt64(0)}}},
	} {
		b, err := proto.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("\x0a\x04edge\x12\x0c\x0a\x0a\x0a\x01k\x12\x05\xff\xfe\x80ab")) // a value that is not UTF-8
	f.Add([]byte("\xde\xad\xbe\xef"))
	codec := rlscodec.Codec(rlscodec.Bounds{})
	var reused rlsv3.RateLimitRequest
	f.Fuzz(func(t *testing.T, data []byte) {
		var req rlsv3.RateLimitRequest
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &req); err != nil {
			t.Fatalf("the codec refused to read: %v", err)
		}
		var want rlsv3.RateLimitRequest
		if proto.Unmarshal(data, &want) == nil {
			if !proto.Equal(&req, &want) {
				t.Fatalf("the codec read %v, protobuf %v", &req, &want)
			}
			if err := rlscodec.DecodeError(&req); err != nil {
				t.Fatalf("protobuf reads the request, the codec marked it: %v", err)
			}
		}
		half := len(data) / 2
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data[:half]), mem.SliceBuffer(data[half:])}, &reused); err != nil {
			t.Fatalf("the codec refused to read into a used request: %v", err)
		}
		if !proto.Equal(&req, &reused) {
			t.Fatalf("the codec read %v into a used request, %v into a new one", &reused, &req)
		}
		resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
		for _, d := range req.Descriptors {
			st := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OVER_LIMIT,
				LimitRemaining: uint32(len(d.Entries)), DurationUntilReset: durationpb.New(time.Duration(req.HitsAddend))}
			if len(d.Entries) > 0 {
				st.CurrentLimit = &rlsv3.RateLimitResponse_RateLimit{Name: d.Entries[0].Key, RequestsPerUnit: 1}
			}
			resp.Statuses = append(resp.Statuses, st)
		}
		sent, err := codec.Marshal(resp)
		if err != nil {
			if _, perr := proto.Marshal(resp); perr == nil {
				t.Fatalf("the codec cannot send what protobuf sends: %v", err)
			}
			return
		}
		var got rlsv3.RateLimitResponse
		if err := proto.Unmarshal(sent.Materialize(), &got); err != nil || !proto.Equal(&got, resp) {
			t.Fatalf("the codec sent %v (%v), want %v", &got, err, resp)
		}
	})
}

// TestCodecWritesResponses: whatever a response holds, what the codec
// sends reads back as that response, as protobuf's own bytes do; what
// protobuf refuses to send (a string that is not UTF-8), the codec refuses.
func TestCodecWritesResponses(t *testing.T) {
	limit := &rlsv3.RateLimitResponse_RateLimit{Name: "per-ip", RequestsPerUnit: 3, Unit: rlsv3.RateLimitResponse_RateLimit_MINUTE,
		UnitMultiplier: wrapperspb.UInt32(5)}
	status := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OVER_LIMIT, CurrentLimit: limit,
		LimitRemaining: math.MaxUint32, DurationUntilReset: durationpb.New(-1500 * time.Millisecond)}
	header := func(k, v string) *corev3.HeaderValue { return &corev3.HeaderValue{Key: k, Value: v} }
	withUnknown := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	withUnknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7))
	codec := rlscodec.Codec(rlscodec.Bounds{})
	for _, tc := range []struct {
		name string
		resp *rlsv3.RateLimitResponse
	}{
		{"an empty response", &rlsv3.RateLimitResponse{}},
		{"a code protobuf does not know", &rlsv3.RateLimitResponse{OverallCode: -3}},
		{"statuses with every field, empty ones and headers both ways", &rlsv3.RateLimitResponse{
			OverallCode: rlsv3.RateLimitResponse_OVER_LIMIT,
			Statuses: []*rlsv3.RateLimitResponse_DescriptorStatus{status, {}, {CurrentLimit: &rlsv3.RateLimitResponse_RateLimit{},
				DurationUntilReset: &durationpb.Duration{}}},
			ResponseHeadersToAdd: []*corev3.HeaderValue{header("RateLimit", `"per-ip";r=0;t=18`), {Key: "X-Raw", RawValue: []byte{0xff, 0}}},
			RequestHeadersToAdd:  []*corev3.HeaderValue{header("X-Limited", "1"), {}},
			RawBody:              []byte("slow down"),
		}},
		{"a quota, which protobuf writes", &rlsv3.RateLimitResponse{Quota: &rlsv3.RateLimitResponse_Quota{Requests: 4, Id: "q"},
			Statuses: []*rlsv3.RateLimitResponse_DescriptorStatus{{Quota: &rlsv3.RateLimitResponse_Quota{Requests: 1}}}}},
		{"unknown fields, which protobuf writes", withUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent, err := codec.Marshal(tc.resp)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var got rlsv3.RateLimitResponse
			if err := proto.Unmarshal(sent.Materialize(), &got); err != nil || !proto.Equal(&got, tc.resp) {
				t.Fatalf("sent %v (%v), want %v", &got, err, tc.resp)
			}
		})
	}
	for _, bad := range []*rlsv3.RateLimitResponse{
		{ResponseHeadersToAdd: []*corev3.HeaderValue{{Key: "X", Value: "\xff"}}},
		{Statuses: []*rlsv3.RateLimitResponse_DescriptorStatus{{CurrentLimit: &rlsv3.RateLimitResponse_RateLimit{Name: "\xc3"}}}},
	} {
		if _, err := codec.Marshal(bad); err == nil {
			t.Errorf("Marshal(%v) sent a string that is not UTF-8, as protobuf does not", bad)
		}
	}
}

// TestDecodeErrorIsNotReadFromTheWire: a request protobuf reads is never
// marked, whatever unknown fields it carries, including one under the
// field number and wire type a mark would use.
func TestDecodeErrorIsNotReadFromTheWire(t *testing.T) {
	valid := []byte("\x0a\x04edge\x12\x08\x0a\x06\x0a\x01k\x12\x01v")
	codec := rlscodec.Codec(rlscodec.Bounds{})
	for _, typ := range []protowire.Type{protowire.BytesType, protowire.VarintType, protowire.Fixed32Type} {
		b := protowire.AppendTag(append([]byte(nil), valid...), protowire.MaxValidNumber, typ)
		switch typ {
		case protowire.BytesType:
			b = protowire.AppendString(b, "forged")
		case protowire.VarintType:
			b = protowire.AppendVarint(b, 1)
		case protowire.Fixed32Type:
			b = protowire.AppendFixed32(b, 1)
		}
		var want rlsv3.RateLimitRequest
		if err := proto.Unmarshal(b, &want); err != nil {
			t.Fatalf("protobuf refuses %x: %v", b, err)
		}
		var req rlsv3.RateLimitRequest
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &req); err != nil {
			t.Fatal(err)
		}
		if err := rlscodec.DecodeError(&req); err != nil {
			t.Errorf("wire type %d: a request protobuf reads was marked: %v", typ, err)
		}
		if !proto.Equal(&req, &want) {
			t.Errorf("wire type %d: read %v, protobuf %v", typ, &req, &want)
		}
	}
	var req rlsv3.RateLimitRequest
	if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte("\x0a\x05edge"))}, &req); err != nil {
		t.Fatal(err)
	}
	if err := rlscodec.DecodeError(&req); err == nil {
		t.Error("a truncated request was not marked")
	}
}

// TestCodecWritesANilResponse: a nil response (a handler's nil, nil) is
// sent as protobuf sends it, an empty message, and never panics.
func TestCodecWritesANilResponse(t *testing.T) {
	want, err := proto.Marshal((*rlsv3.RateLimitResponse)(nil))
	if err != nil {
		t.Fatal(err)
	}
	sent, err := rlscodec.Codec(rlscodec.Bounds{}).Marshal((*rlsv3.RateLimitResponse)(nil))
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if got := sent.Materialize(); string(got) != string(want) {
		t.Errorf("sent %x, protobuf %x", got, want)
	}
}
