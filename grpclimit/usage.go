package grpclimit

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// recorded is the header and trailer metadata a handler set, for the
// limits that count what the answer reports (httplimit.CountHeader).
type recorded struct{ md metadata.MD }

func (r *recorded) add(md metadata.MD) { r.md = metadata.Join(r.md, md) }

// header returns what r recorded as an HTTP header (keys canonical, each
// key's values in the order the handler set them); nil for a nil r.
func (r *recorded) header() http.Header {
	if r == nil {
		return nil
	}
	h := make(http.Header, len(r.md))
	for k, vs := range r.md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// usage records what a unary handler sets with grpc.SetHeader,
// grpc.SendHeader and grpc.SetTrailer, passing it on.
type usage struct {
	grpc.ServerTransportStream
	recorded
}

// recordUsage returns ctx with its stream recorded by a usage, whose
// record it returns; ctx as it is, and nil, when it has no stream (a call
// not from a server).
func recordUsage(ctx context.Context) (context.Context, *recorded) {
	sts := grpc.ServerTransportStreamFromContext(ctx)
	if sts == nil {
		return ctx, nil
	}
	u := &usage{ServerTransportStream: sts}
	return grpc.NewContextWithServerTransportStream(ctx, u), &u.recorded
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
