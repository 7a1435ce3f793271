package envoy

import (
	"fmt"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Codec returns the gRPC codec to serve the Service with:
//
//	srv := grpc.NewServer(grpc.ForceServerCodecV2(envoy.Codec()))
//	envoy.Register(srv, svc)
//
// It is gRPC's protobuf codec except for how it reads a RateLimitRequest
// that protobuf refuses:
//
//   - Strings that are not UTF-8 are read as the bytes they are. Envoy
//     copies request header values into descriptors, a header value may
//     hold any byte from 0x80 (obs-text), and Envoy's protobuf library sends
//     such a string as it is. gRPC's codec refuses the whole request
//     (status Internal), which Envoy — with failure_mode_deny false, its
//     default — answers by letting the request through: a client could skip
//     its limit by putting one such byte in the header a rule limits. With
//     this codec the descriptor is limited like any other, under its exact
//     bytes.
//   - Bytes that are not a RateLimitRequest at all (truncated, malformed
//     wire format) are answered with status InvalidArgument, as malformed
//     descriptors are, instead of gRPC's Internal.
//
// It also reads and writes the messages of a usual call (a request of
// descriptors of entries; any response protobuf could send) itself, field
// by field, for a fraction of protobuf's reflection-driven cost, and reads
// a request into the descriptor and entry messages of the one it held
// before (Register's handler hands it pooled requests). The bytes read and
// written mean exactly what protobuf's would; anything else is protobuf's.
func Codec() encoding.CodecV2 { return codec{} }

type codec struct{}

// base is gRPC's protobuf codec (registered by the import of its package).
var base = encoding.GetCodecV2(grpcproto.Name)

func (codec) Name() string                                { return grpcproto.Name }
func (codec) Unmarshal(data mem.BufferSlice, v any) error { return unmarshal(data, v) }

// Marshal writes a RateLimitResponse itself when it can (appendResponse),
// anything else through protobuf.
func (codec) Marshal(v any) (mem.BufferSlice, error) {
	if resp, ok := v.(*rlsv3.RateLimitResponse); ok {
		if b, ok := appendResponse(make([]byte, 0, responseBytes), resp); ok {
			return mem.BufferSlice{mem.SliceBuffer(b)}, nil
		}
	}
	return base.Marshal(v)
}

// responseBytes is room for a usual response: one status and the IETF
// headers.
const responseBytes = 256

// undecodable is the field number under which the codec leaves, in the
// unknown fields of a request it could not read, why it could not: the
// largest valid number, which no RateLimitRequest uses.
const undecodable protowire.Number = protowire.MaxValidNumber

func unmarshal(data mem.BufferSlice, v any) error {
	req, ok := v.(*rlsv3.RateLimitRequest)
	var b []byte
	if ok {
		if len(data) == 1 {
			b = data[0].ReadOnlyData()
		} else {
			b = data.Materialize()
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
	req.Reset()
	var mark []byte
	mark = protowire.AppendTag(mark, undecodable, protowire.BytesType)
	mark = protowire.AppendString(mark, err.Error())
	req.ProtoReflect().SetUnknown(mark)
	return nil
}

// decodeError returns why the codec could not read req, or nil.
func decodeError(req *rlsv3.RateLimitRequest) error {
	b := req.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil
		}
		if num == undecodable && typ == protowire.BytesType {
			why, _ := protowire.ConsumeString(b[n:])
			return fmt.Errorf("not a RateLimitRequest: %s", why)
		}
		b = b[n+m:]
	}
	return nil
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
