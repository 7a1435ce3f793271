// Package rlscodec is the gRPC codec of sluice's Envoy rate limit service:
// gRPC's protobuf codec, except that it reads strings that are not UTF-8 as
// the bytes they are and reads and writes the messages of a usual call
// itself. Why each exists is in Codec's documentation (a security reason
// and a measured one); protobuf stays the reference, and the fuzz target
// beside it (FuzzCodecReadsAsProtobuf) holds the codec to it.
package rlscodec

import (
	"errors"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Codec returns the gRPC codec of envoy.Service (envoy.Codec documents
// it): protobuf's, except that a RateLimitRequest's strings that are not
// UTF-8 are read as their bytes (security: gRPC's codec would refuse the
// request, and Envoy by default lets a refused call's request through), a
// request that is not a RateLimitRequest at all is marked for DecodeError
// instead of failing with status Internal, and the messages of a usual call
// are read and written field by field (measured: a third of the CPU
// protobuf's reflection spent on them), reusing the messages of the request
// read into. A request beyond b is not read at all but marked for
// DecodeError (see Bounds).
func Codec(b Bounds) encoding.CodecV2 { return codec{b} }

// Bounds are the most descriptors a RateLimitRequest may carry and the
// most entries one of its descriptors may have; 0 means no bound. A
// request beyond them is marked for DecodeError as soon as its wire format
// is counted, before a message is made for any of its descriptors or
// entries: a megabyte of empty descriptors would otherwise become half a
// million messages, some 70 MB, for the service to refuse.
type Bounds struct {
	Descriptors, Entries int
}

type codec struct{ bounds Bounds }

// base is gRPC's protobuf codec (registered by the import of its package).
var base = encoding.GetCodecV2(grpcproto.Name)

func (codec) Name() string { return grpcproto.Name }
func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	return unmarshal(data, v, c.bounds)
}

// Marshal writes a RateLimitResponse itself when it can (appendResponse),
// anything else (a nil response among them) through protobuf.
func (codec) Marshal(v any) (mem.BufferSlice, error) {
	if resp, ok := v.(*rlsv3.RateLimitResponse); ok && resp != nil {
		if b, ok := appendResponse(make([]byte, 0, responseBytes), resp); ok {
			return mem.BufferSlice{mem.SliceBuffer(b)}, nil
		}
	}
	return base.Marshal(v)
}

// responseBytes is room for a usual response: one status and the IETF
// headers.
const responseBytes = 256

// The codec leaves why it could not read a request as the request's only
// unknown bytes: a tag of field undecodable (the largest valid number, which
// no RateLimitRequest uses) and wire type markType, then the reason as
// length-delimited bytes. Wire type 7 is reserved: protobuf refuses any input
// holding it, so no unknown field protobuf keeps from the wire can pass for
// the mark.
const (
	undecodable protowire.Number = protowire.MaxValidNumber
	markType    protowire.Type   = 7
)

func unmarshal(data mem.BufferSlice, v any, bounds Bounds) error {
	req, ok := v.(*rlsv3.RateLimitRequest)
	var b []byte
	if ok {
		if len(data) == 1 {
			b = data[0].ReadOnlyData()
		} else {
			b = data.Materialize()
		}
		if err := bounds.check(b); err != nil {
			mark(req, err.Error())
			return nil
		}
		if decodeRequest(b, req) {
			return nil
		}
	}
	err := base.Unmarshal(data, v)
	if err == nil || !ok {
		return err
	}
	req.Reset()
	if lerr := unmarshalLenient(b, req.ProtoReflect()); lerr == nil {
		return nil
	}
	mark(req, "not a RateLimitRequest: "+err.Error())
	return nil
}

// mark empties req and marks it with why, for DecodeError.
func mark(req *rlsv3.RateLimitRequest, why string) {
	req.Reset()
	var m []byte
	m = protowire.AppendTag(m, undecodable, markType)
	m = protowire.AppendString(m, why)
	req.ProtoReflect().SetUnknown(m)
}

// DecodeError returns why the codec did not read req, or nil: a request it
// could not read at all, or that is beyond its Bounds, reaches the service
// marked, so that the service answers InvalidArgument with this reason.
func DecodeError(req *rlsv3.RateLimitRequest) error {
	b := req.ProtoReflect().GetUnknown()
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != undecodable || typ != markType {
		return nil
	}
	why, m := protowire.ConsumeString(b[n:])
	if m < 0 || n+m != len(b) {
		return nil
	}
	return errors.New(why)
}

// unmarshalLenient reads the wire format b into m as proto.Unmarshal does,
// except that strings keep their bytes whether or not they are UTF-8. It
// fails on malformed wire format.
func unmarshalLenient(b []byte, m protoreflect.Message) error {
	fields := m.Descriptor().Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		size := protowire.ConsumeFieldValue(num, typ, b[n:])
		if size < 0 {
			return protowire.ParseError(size)
		}
		field := b[:n+size]
		fd := fields.ByNumber(num)
		switch {
		case fd != nil && typ == protowire.BytesType && fd.Kind() == protoreflect.StringKind:
			v, _ := protowire.ConsumeBytes(b[n:])
			s := protoreflect.ValueOfString(string(v))
			if fd.IsList() {
				m.Mutable(fd).List().Append(s)
			} else {
				m.Set(fd, s)
			}
		case fd != nil && typ == protowire.BytesType && fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			v, _ := protowire.ConsumeBytes(b[n:])
			if fd.IsList() {
				list := m.Mutable(fd).List()
				e := list.NewElement()
				if err := unmarshalLenient(v, e.Message()); err != nil {
					return err
				}
				list.Append(e)
			} else if err := unmarshalLenient(v, m.Mutable(fd).Message()); err != nil {
				return err
			}
		default: // anything else is protobuf's to read, strings aside
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(field, m.Interface()); err != nil {
				return err
			}
		}
		b = b[n+size:]
	}
	return nil
}
