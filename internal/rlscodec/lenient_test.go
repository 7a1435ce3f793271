package rlscodec_test

import (
	"bytes"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/sluice-dev/sluice/internal/rlscodec"
)

// bytesSchema resolves the files of rls.proto and ratelimit.proto rebuilt
// with every string field a bytes field, and anything else as protobuf's
// registry does: the reference of a reading that keeps a string's bytes.
type bytesSchema struct{ local *protoregistry.Files }

func (r bytesSchema) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.local.FindFileByPath(path); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (r bytesSchema) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.local.FindDescriptorByName(name); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// stringsAsBytes turns the string fields of ms and their nested messages
// into bytes fields.
func stringsAsBytes(ms []*descriptorpb.DescriptorProto) {
	for _, m := range ms {
		for _, f := range m.Field {
			if f.GetType() == descriptorpb.FieldDescriptorProto_TYPE_STRING {
				f.Type = descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
			}
		}
		stringsAsBytes(m.NestedType)
	}
}

// requestAsBytes is RateLimitRequest's descriptor with every string of the
// request, its descriptors and their entries read as bytes.
func requestAsBytes(t testing.TB) protoreflect.MessageDescriptor {
	r := bytesSchema{local: new(protoregistry.Files)}
	req := (&rlsv3.RateLimitRequest{}).ProtoReflect().Descriptor()
	desc := req.Fields().ByName("descriptors").Message()
	for _, file := range []protoreflect.FileDescriptor{desc.ParentFile(), req.ParentFile()} {
		fp := protodesc.ToFileDescriptorProto(file)
		stringsAsBytes(fp.MessageType)
		fd, err := protodesc.NewFile(fp, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.local.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
	}
	d, err := r.local.FindDescriptorByName(req.FullName())
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}

// sameMessage reports whether a and b hold the same fields (a string equal
// to a bytes field of the same number and content) and unknown bytes.
func sameMessage(a, b protoreflect.Message) bool {
	if !bytes.Equal(canonicalUnknown(a.GetUnknown()), canonicalUnknown(b.GetUnknown())) {
		return false
	}
	fa, fb := a.Descriptor().Fields(), b.Descriptor().Fields()
	if fa.Len() != fb.Len() {
		return false
	}
	for i := range fa.Len() {
		x := fa.Get(i)
		y := fb.ByNumber(x.Number())
		if y == nil || a.Has(x) != b.Has(y) {
			return false
		}
		if !a.Has(x) {
			continue
		}
		if x.IsList() {
			la, lb := a.Get(x).List(), b.Get(y).List()
			if la.Len() != lb.Len() {
				return false
			}
			for j := range la.Len() {
				if !sameValue(x, la.Get(j), lb.Get(j)) {
					return false
				}
			}
		} else if !sameValue(x, a.Get(x), b.Get(y)) {
			return false
		}
	}
	return true
}

// canonicalUnknown is b with each top-level tag and varint value written
// in its shortest form: protobuf's generated messages keep unknown fields so,
// dynamicpb's as they came.
func canonicalUnknown(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return append(out, b...)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return append(out, b...)
		}
		out = protowire.AppendTag(out, num, typ)
		if typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(b[n:])
			out = protowire.AppendVarint(out, v)
		} else {
			out = append(out, b[n:n+m]...)
		}
		b = b[n+m:]
	}
	return out
}

func sameValue(fd protoreflect.FieldDescriptor, a, b protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return sameMessage(a.Message(), b.Message())
	case protoreflect.StringKind, protoreflect.BytesKind:
		return string(valueBytes(a)) == string(valueBytes(b))
	case protoreflect.EnumKind:
		return a.Enum() == b.Enum()
	}
	return a.Interface() == b.Interface()
}

func valueBytes(v protoreflect.Value) []byte {
	if s, ok := v.Interface().(string); ok {
		return []byte(s)
	}
	return v.Bytes()
}

// FuzzCodecReadsStringsAsBytes: the codec reads every input as
// protobuf reads it with the request's strings taken for bytes — the same
// fields, values and unknown bytes, unmarked — and marks for DecodeError
// exactly the inputs that reading refuses.
func FuzzCodecReadsStringsAsBytes(f *testing.F) {
	for _, s := range []string{
		"\x0a\x04edge\x12\x0c\x0a\x0a\x0a\x01k\x12\x05\xff\xfe\x80ab",
		"\x0a\x02\xff\xfe\x12\x0e\x0a\x06\x0a\x01k\x12\x01\xff\x12\x04\x08\x05\x10\x02\x18\x03",
		"\x0a\x01\xff\x12\x08\x1a\x02\x08\x07\x20\x01\x28\x00\x18\x02",
		"\x0a\x01\xff\x12\x02\x0b\x0c\x12\x00",
		"\x0a\x01\xff\x0a\x01a\x12\x06\x12\x02\x08\x01\x12\x00",
		"\x0a\x01\xff\x12\x03\x0a\x01",
	} {
		f.Add([]byte(s))
	}
	ref := requestAsBytes(f)
	codec := rlscodec.Codec(rlscodec.Bounds{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var req rlsv3.RateLimitRequest
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &req); err != nil {
			t.Fatalf("the codec refused to read: %v", err)
		}
		want := dynamicpb.NewMessage(ref)
		if err := proto.Unmarshal(data, want); err != nil {
			if rlscodec.DecodeError(&req) == nil {
				t.Fatalf("protobuf refuses %x (%v), the codec read %v unmarked", data, err, &req)
			}
			return
		}
		if err := rlscodec.DecodeError(&req); err != nil {
			t.Fatalf("protobuf reads %x, the codec marked it: %v", data, err)
		}
		if !sameMessage(req.ProtoReflect(), want) {
			t.Fatalf("%x: the codec read %v, protobuf %v", data, &req, want)
		}
	})
}
