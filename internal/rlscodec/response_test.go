package rlscodec_test

import (
	"bytes"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/internal/rlscodec"
)

// FuzzCodecWritesAsProtobuf: whatever a response holds — codes and units
// protobuf does not know, negative durations, strings in any bytes, nil
// and empty messages — the codec sends the bytes proto.Marshal writes for
// it, and refuses what protobuf refuses.
func FuzzCodecWritesAsProtobuf(f *testing.F) {
	f.Add(int32(2), int32(1), uint32(7), int32(3), "per-ip", uint32(5), int64(-1), int32(-500), "RateLimit", `"l";r=0`,
		[]byte{0xff, 0}, uint16(0xffff))
	f.Add(int32(-1), int32(-7), uint32(0), int32(0), "\xff", uint32(0), int64(1<<62), int32(999_999_999), "", "\xc3", []byte(nil), uint16(0))
	codec := rlscodec.Codec(rlscodec.Bounds{})
	f.Fuzz(func(t *testing.T, code, stCode int32, perUnit uint32, unit int32, name string, mult uint32, secs int64, nanos int32,
		key, value string, raw []byte, shape uint16) {
		resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_Code(code)}
		if shape&1 != 0 {
			resp.RawBody = raw
		}
		for i := range int(shape >> 1 & 3) {
			st := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_Code(stCode), LimitRemaining: perUnit ^ uint32(i)}
			if shape&8 != 0 {
				st.CurrentLimit = &rlsv3.RateLimitResponse_RateLimit{Name: name, RequestsPerUnit: perUnit,
					Unit: rlsv3.RateLimitResponse_RateLimit_Unit(unit)}
				if shape&16 != 0 {
					st.CurrentLimit.UnitMultiplier = wrapperspb.UInt32(mult)
				}
			}
			if shape&32 != 0 {
				st.DurationUntilReset = &durationpb.Duration{Seconds: secs, Nanos: nanos}
			}
			resp.Statuses = append(resp.Statuses, st)
		}
		h := &corev3.HeaderValue{Key: key, Value: value}
		if shape&64 != 0 {
			h.RawValue = raw
		}
		for i := range int(shape >> 7 & 3) {
			if i == 0 && shape&512 != 0 {
				resp.ResponseHeadersToAdd = append(resp.ResponseHeadersToAdd, &corev3.HeaderValue{})
			}
			resp.ResponseHeadersToAdd = append(resp.ResponseHeadersToAdd, h)
		}
		for range int(shape >> 10 & 3) {
			resp.RequestHeadersToAdd = append(resp.RequestHeadersToAdd, h)
		}
		if shape&4096 != 0 {
			resp.Quota = &rlsv3.RateLimitResponse_Quota{Requests: perUnit, Id: name}
		}
		want, werr := proto.Marshal(resp)
		sent, err := codec.Marshal(resp)
		if (err != nil) != (werr != nil) {
			t.Fatalf("%v: the codec says %v, protobuf %v", resp, err, werr)
		}
		if err != nil {
			return
		}
		if got := sent.Materialize(); !bytes.Equal(got, want) {
			t.Fatalf("%v: the codec sent %x, protobuf %x", resp, got, want)
		}
	})
}
