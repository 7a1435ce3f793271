package envoy

import (
	"google.golang.org/grpc/encoding"

	"github.com/sluice-dev/sluice/internal/rlscodec"
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
//   - A request of more than MaxDescriptors descriptors, or with a
//     descriptor of more than MaxEntries entries, is answered with status
//     InvalidArgument without being read: its wire format is counted, and
//     no message is made for its descriptors and entries (protobuf would
//     make one for each, some 140 bytes of memory for an empty descriptor
//     or entry of 2 bytes on the wire, before the service refused them).
//
// It reads and writes the messages of a usual call field by field rather
// than through protobuf's reflection; the bytes read and written mean
// exactly what protobuf's would.
func Codec() encoding.CodecV2 {
	return rlscodec.Codec(rlscodec.Bounds{Descriptors: MaxDescriptors, Entries: MaxEntries})
}
