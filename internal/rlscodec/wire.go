package rlscodec

import (
	"unicode/utf8"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The codec reads and writes the messages of a usual call itself, field by
// field, instead of through protobuf's reflection: a request of domain,
// descriptors of entries and hits_addend, and a response of codes, limits,
// remainders, durations and headers. That is a third of the CPU protobuf
// spent on them, and the request reuses the messages of an earlier one
// (see envoy's handleShouldRateLimit). Anything else — a field these functions do not
// know, a limit override, a string that is not UTF-8 in a response — goes
// to protobuf as before, so the bytes read and written mean the same either
// way (FuzzCodecReadsAsProtobuf, FuzzCodecReadsStringsAsBytes and
// FuzzCodecWritesAsProtobuf hold both to protobuf).

// Field numbers (envoy/service/ratelimit/v3/rls.proto,
// envoy/extensions/common/ratelimit/v3/ratelimit.proto,
// envoy/config/core/v3/base.proto, google/protobuf/duration.proto).
const (
	fieldRequestDomain      = 1
	fieldRequestDescriptors = 2
	fieldRequestHitsAddend  = 3
	fieldDescriptorEntries  = 1
	fieldEntryKey           = 1
	fieldEntryValue         = 2

	fieldResponseOverallCode     = 1
	fieldResponseStatuses        = 2
	fieldResponseResponseHeaders = 3
	fieldResponseRequestHeaders  = 4
	fieldResponseRawBody         = 5
	fieldStatusCode              = 1
	fieldStatusCurrentLimit      = 2
	fieldStatusLimitRemaining    = 3
	fieldStatusDurationUntil     = 4
	fieldLimitRequestsPerUnit    = 1
	fieldLimitUnit               = 2
	fieldLimitName               = 3
	fieldLimitUnitMultiplier     = 4
	fieldWrapperValue            = 1
	fieldDurationSeconds         = 1
	fieldDurationNanos           = 2
	fieldHeaderKey               = 1
	fieldHeaderValue             = 2
	fieldHeaderRawValue          = 3
)

// decodeRequest reads the wire format b into req, reusing the descriptor
// and entry messages req holds from an earlier request. It reports false,
// leaving req in any state, when b holds anything but a domain, descriptors
// of entries (keys and values) and a request hits_addend, or is malformed:
// protobuf must read it then. Strings keep their bytes, UTF-8 or not, as
// unmarshalLenient's do.
func decodeRequest(b []byte, req *rlsv3.RateLimitRequest) bool {
	descs := req.Descriptors[:0]
	req.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch {
		case num == fieldRequestDomain && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return false
			}
			req.Domain, b = string(v), b[m:]
		case num == fieldRequestHitsAddend && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return false
			}
			req.HitsAddend, b = uint32(v), b[m:]
		case num == fieldRequestDescriptors && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return false
			}
			b = b[m:]
			var d *ratelimitv3.RateLimitDescriptor
			if len(descs) < cap(descs) {
				d = descs[: len(descs)+1 : cap(descs)][len(descs)]
			}
			if d == nil {
				d = new(ratelimitv3.RateLimitDescriptor)
			}
			descs = append(descs, d)
			if !decodeDescriptor(v, d) {
				return false
			}
		default:
			return false
		}
	}
	req.Descriptors = descs
	return true
}

// decodeDescriptor reads a descriptor of entries only into d, reusing its
// entries.
func decodeDescriptor(b []byte, d *ratelimitv3.RateLimitDescriptor) bool {
	entries := d.Entries[:0]
	d.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != fieldDescriptorEntries || typ != protowire.BytesType {
			return false
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return false
		}
		b = b[n+m:]
		var e *ratelimitv3.RateLimitDescriptor_Entry
		if len(entries) < cap(entries) {
			e = entries[: len(entries)+1 : cap(entries)][len(entries)]
		}
		if e == nil {
			e = new(ratelimitv3.RateLimitDescriptor_Entry)
		} else {
			e.Reset()
		}
		entries = append(entries, e)
		for len(v) > 0 {
			num, typ, n := protowire.ConsumeTag(v)
			if n < 0 || typ != protowire.BytesType || num != fieldEntryKey && num != fieldEntryValue {
				return false
			}
			s, m := protowire.ConsumeBytes(v[n:])
			if m < 0 {
				return false
			}
			v = v[n+m:]
			if num == fieldEntryKey {
				e.Key = string(s)
			} else {
				e.Value = string(s)
			}
		}
	}
	d.Entries = entries
	return true
}

// appendResponse appends the wire format of resp to b, as proto.Marshal
// writes it. It reports false when resp holds what it does not write
// (quota, dynamic metadata, unknown fields) or a string that is not UTF-8,
// which protobuf refuses to send: protobuf must write it then.
func appendResponse(b []byte, resp *rlsv3.RateLimitResponse) ([]byte, bool) {
	if resp.Quota != nil || resp.DynamicMetadata != nil || len(resp.ProtoReflect().GetUnknown()) > 0 {
		return b, false
	}
	b = appendVarintField(b, fieldResponseOverallCode, uint64(resp.OverallCode))
	for _, st := range resp.Statuses {
		if st == nil || st.Quota != nil || len(st.ProtoReflect().GetUnknown()) > 0 {
			return b, false
		}
		size, ok := statusSize(st)
		if !ok {
			return b, false
		}
		b = protowire.AppendTag(b, fieldResponseStatuses, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(size))
		b = appendVarintField(b, fieldStatusCode, uint64(st.Code))
		if l := st.CurrentLimit; l != nil {
			b = protowire.AppendTag(b, fieldStatusCurrentLimit, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(limitSize(l)))
			b = appendVarintField(b, fieldLimitRequestsPerUnit, uint64(l.RequestsPerUnit))
			b = appendVarintField(b, fieldLimitUnit, uint64(l.Unit))
			b = appendStringField(b, fieldLimitName, l.Name)
			if m := l.UnitMultiplier; m != nil {
				b = protowire.AppendTag(b, fieldLimitUnitMultiplier, protowire.BytesType)
				b = protowire.AppendVarint(b, uint64(varintFieldSize(fieldWrapperValue, uint64(m.Value))))
				b = appendVarintField(b, fieldWrapperValue, uint64(m.Value))
			}
		}
		b = appendVarintField(b, fieldStatusLimitRemaining, uint64(st.LimitRemaining))
		if d := st.DurationUntilReset; d != nil {
			b = protowire.AppendTag(b, fieldStatusDurationUntil, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(durationSize(d)))
			b = appendVarintField(b, fieldDurationSeconds, uint64(d.Seconds))
			b = appendVarintField(b, fieldDurationNanos, uint64(int64(d.Nanos)))
		}
	}
	var ok bool
	if b, ok = appendHeaders(b, fieldResponseResponseHeaders, resp.ResponseHeadersToAdd); !ok {
		return b, false
	}
	if b, ok = appendHeaders(b, fieldResponseRequestHeaders, resp.RequestHeadersToAdd); !ok {
		return b, false
	}
	if len(resp.RawBody) > 0 {
		b = protowire.AppendTag(b, fieldResponseRawBody, protowire.BytesType)
		b = protowire.AppendBytes(b, resp.RawBody)
	}
	return b, true
}

func appendHeaders(b []byte, field protowire.Number, hs []*corev3.HeaderValue) ([]byte, bool) {
	for _, h := range hs {
		if h == nil || !utf8.ValidString(h.Key) || !utf8.ValidString(h.Value) || len(h.ProtoReflect().GetUnknown()) > 0 {
			return b, false
		}
		size := stringFieldSize(fieldHeaderKey, h.Key) + stringFieldSize(fieldHeaderValue, h.Value) +
			stringFieldSize(fieldHeaderRawValue, string(h.RawValue))
		b = protowire.AppendTag(b, field, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(size))
		b = appendStringField(b, fieldHeaderKey, h.Key)
		b = appendStringField(b, fieldHeaderValue, h.Value)
		if len(h.RawValue) > 0 {
			b = protowire.AppendTag(b, fieldHeaderRawValue, protowire.BytesType)
			b = protowire.AppendBytes(b, h.RawValue)
		}
	}
	return b, true
}

// statusSize is the encoded size of st, false if it holds a string that
// is not UTF-8 or unknown fields.
func statusSize(st *rlsv3.RateLimitResponse_DescriptorStatus) (int, bool) {
	n := varintFieldSize(fieldStatusCode, uint64(st.Code)) + varintFieldSize(fieldStatusLimitRemaining, uint64(st.LimitRemaining))
	if l := st.CurrentLimit; l != nil {
		if !utf8.ValidString(l.Name) || len(l.ProtoReflect().GetUnknown()) > 0 ||
			l.UnitMultiplier != nil && len(l.UnitMultiplier.ProtoReflect().GetUnknown()) > 0 {
			return 0, false
		}
		n += messageFieldSize(fieldStatusCurrentLimit, limitSize(l))
	}
	if d := st.DurationUntilReset; d != nil {
		if len(d.ProtoReflect().GetUnknown()) > 0 {
			return 0, false
		}
		n += messageFieldSize(fieldStatusDurationUntil, durationSize(d))
	}
	return n, true
}

func limitSize(l *rlsv3.RateLimitResponse_RateLimit) int {
	n := varintFieldSize(fieldLimitRequestsPerUnit, uint64(l.RequestsPerUnit)) + varintFieldSize(fieldLimitUnit, uint64(l.Unit)) +
		stringFieldSize(fieldLimitName, l.Name)
	if m := l.UnitMultiplier; m != nil {
		n += messageFieldSize(fieldLimitUnitMultiplier, varintFieldSize(fieldWrapperValue, uint64(m.Value)))
	}
	return n
}

func durationSize(d *durationpb.Duration) int {
	return varintFieldSize(fieldDurationSeconds, uint64(d.Seconds)) + varintFieldSize(fieldDurationNanos, uint64(int64(d.Nanos)))
}

// varintFieldSize is the size of a proto3 varint field of value v: nothing
// for 0, which proto3 does not send.
func varintFieldSize(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func stringFieldSize(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func messageFieldSize(num protowire.Number, size int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(size)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}
