package grpclimit

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// usage records the header and trailer metadata a unary handler sets
// (grpc.SetHeader, grpc.SendHeader, grpc.SetTrailer), passing it on, for
// the limits that count what the answer reports (httplimit.CountHeader).
type usage struct {
	grpc.ServerTransportStream
	md metadata.MD
}

// recordUsage returns ctx with its stream recorded by a usage; ctx as it
// is, and a nil usage, when it has no stream (a call not from a server).
func recordUsage(ctx context.Context) (context.Context, *usage) {
	sts := grpc.ServerTransportStreamFromContext(ctx)
	if sts == nil {
		return ctx, nil
	}
	u := &usage{ServerTransportStream: sts}
	return grpc.NewContextWithServerTransportStream(ctx, u), u
}

func (u *usage) SetHeader(md metadata.MD) error {
	u.md = metadata.Join(u.md, md)
	return u.ServerTransportStream.SetHeader(md)
}

func (u *usage) SendHeader(md metadata.MD) error {
	u.md = metadata.Join(u.md, md)
	return u.ServerTransportStream.SendHeader(md)
}

func (u *usage) SetTrailer(md metadata.MD) error {
	u.md = metadata.Join(u.md, md)
	return u.ServerTransportStream.SetTrailer(md)
}

// header returns what u recorded as an HTTP header (keys canonical, each
// key's values in the order the handler set them); nil for a nil u.
func (u *usage) header() http.Header {
	if u == nil {
		return nil
	}
	return headerOf(u.md)
}

// usageStream is usage for a stream handler's grpc.ServerStream.
type usageStream struct {
	grpc.ServerStream
	md metadata.MD
}

func (u *usageStream) SetHeader(md metadata.MD) error {
	u.md = metadata.Join(u.md, md)
	return u.ServerStream.SetHeader(md)
}

func (u *usageStream) SendHeader(md metadata.MD) error {
	u.md = metadata.Join(u.md, md)
	return u.ServerStream.SendHeader(md)
}

func (u *usageStream) SetTrailer(md metadata.MD) {
	u.md = metadata.Join(u.md, md)
	u.ServerStream.SetTrailer(md)
}

func (u *usageStream) header() http.Header {
	if u == nil {
		return nil
	}
	return headerOf(u.md)
}

// headerOf turns metadata into an HTTP header.
func headerOf(md metadata.MD) http.Header {
	h := make(http.Header, len(md))
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}
