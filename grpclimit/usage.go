package grpclimit

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// recorded is the header and trailer metadata of a call's answer, for the
// limits that count what the answer reports (httplimit.CountHeader): read
// from the call's stream when the handler returns (see answerMetadata), or
// caught as the handler sets it.
type recorded struct {
	md metadata.MD
	// of reads the answer's metadata when the handler returns; nil when
	// it was caught (md) instead.
	of answerMetadata
}

func (r *recorded) add(md metadata.MD) { r.md = metadata.Join(r.md, md) }

// header returns what r recorded as an HTTP header (keys canonical, each
// key's values in the order they were set, the header's before the
// trailer's); nil for a nil r.
func (r *recorded) header() http.Header {
	if r == nil {
		return nil
	}
	md := r.md
	if r.of != nil {
		h, _ := r.of.Header()
		md = metadata.Join(h, r.of.Trailer())
	}
	h := make(http.Header, len(md))
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// answerMetadata is the part of grpc-go's own server stream (the
// grpc.ServerTransportStream in a handler's context) that reads the
// header and trailer metadata set for the call's answer, by its handler
// and by every interceptor, sent or not.
//
// grpc.SetSendCompressor and grpc.ClientSupportedCompressors work only on
// that stream's own type, which no other package can name: a call's
// stream, when it is grpc-go's, is therefore read when its handler
// returns rather than replaced in the handler's context by one that
// records.
type answerMetadata interface {
	Header() (metadata.MD, error)
	Trailer() metadata.MD
}

// recordUsage returns the record of the answer's metadata of the call of
// ctx, and the context its handler is to run with: ctx itself when the
// call's stream is one whose answer can be read (grpc-go's), else ctx with
// its stream recorded by a usage. It returns ctx and nil when ctx has no
// stream (a call not from a server).
func recordUsage(ctx context.Context) (context.Context, *recorded) {
	sts := grpc.ServerTransportStreamFromContext(ctx)
	if sts == nil {
		return ctx, nil
	}
	if of, ok := sts.(answerMetadata); ok {
		return ctx, &recorded{of: of}
	}
	u := &usage{ServerTransportStream: sts}
	return grpc.NewContextWithServerTransportStream(ctx, u), &u.recorded
}

// usage records what a unary handler sets with grpc.SetHeader,
// grpc.SendHeader and grpc.SetTrailer on a stream that is not grpc-go's
// own, passing it on.
type usage struct {
	grpc.ServerTransportStream
	recorded
}

func (u *usage) SetHeader(md metadata.MD) error {
	u.add(md)
	return u.ServerTransportStream.SetHeader(md)
}

func (u *usage) SendHeader(md metadata.MD) error {
	u.add(md)
	return u.ServerTransportStream.SendHeader(md)
}

func (u *usage) SetTrailer(md metadata.MD) error {
	u.add(md)
	return u.ServerTransportStream.SetTrailer(md)
}

// recordStream returns the record of the answer's metadata of the stream
// ss, and the stream its handler is to run with: ss itself when its
// context's stream is grpc-go's, whose answer is read when the handler
// returns (so that what the handler sets with grpc.SetHeader or
// grpc.SetTrailer on ss.Context() is recorded too), else ss wrapped by a
// usageStream.
func recordStream(ss grpc.ServerStream) (grpc.ServerStream, *recorded) {
	if of, ok := grpc.ServerTransportStreamFromContext(ss.Context()).(answerMetadata); ok {
		return ss, &recorded{of: of}
	}
	u := &usageStream{ServerStream: ss}
	return u, &u.recorded
}

// usageStream is usage for a stream handler's grpc.ServerStream.
type usageStream struct {
	grpc.ServerStream
	recorded
}

func (u *usageStream) SetHeader(md metadata.MD) error {
	u.add(md)
	return u.ServerStream.SetHeader(md)
}

func (u *usageStream) SendHeader(md metadata.MD) error {
	u.add(md)
	return u.ServerStream.SendHeader(md)
}

func (u *usageStream) SetTrailer(md metadata.MD) {
	u.add(md)
	u.ServerStream.SetTrailer(md)
}
