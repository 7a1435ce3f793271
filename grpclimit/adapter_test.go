package grpclimit_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// limiter is go-grpc-middleware v2's ratelimit.Limiter, declared here so
// that this module does not require go-grpc-middleware for one test.
type limiter interface {
	Limit(ctx context.Context) error
}

var _ limiter = (*grpclimit.Server)(nil)

// middlewareInterceptor stands in for go-grpc-middleware v2.3.4's
// ratelimit.UnaryServerInterceptor, which does exactly this with a Limiter.
func middlewareInterceptor(l limiter) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := l.Limit(ctx); err != nil {
			return nil, status.Errorf(codes.ResourceExhausted, "%s is rejected by grpc_ratelimit middleware, please retry later. %s", info.FullMethod, err)
		}
		return handler(ctx, req)
	}
}

func TestServerIsAGoGRPCMiddlewareLimiter(t *testing.T) {
	t.Parallel()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	p := plan("free", sluice.PerMinute(1))
	p.Costs = map[string]int64{methodHeavy: 0} // the method is known to Limit: Heavy is free
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{p}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{}
	ts.conn = serveWith(t, grpc.ChainUnaryInterceptor(middlewareInterceptor(s)))
	ctx := context.Background()
	if tr, err := say(ctx, ts.conn, methodSay, "x-api-key", "k"); err != nil || tr.Get("ratelimit") == nil {
		t.Fatalf("first call: %v, trailers %v", err, tr)
	}
	for range 3 {
		if _, err := say(ctx, ts.conn, methodHeavy, "x-api-key", "k"); err != nil {
			t.Errorf("a free method: %v", err)
		}
	}
	tr, err := say(ctx, ts.conn, methodSay, "x-api-key", "k")
	msg := status.Convert(err).Message()
	if status.Code(err) != codes.ResourceExhausted || !strings.HasSuffix(msg, "please retry later. Rate limit exceeded: 1 request per minute on the free plan. Retry in 60 s.") {
		t.Errorf("refusal through the middleware: %v", err)
	}
	if tr.Get("ratelimit") == nil || tr.Get("retry-after") == nil {
		t.Errorf("trailers of the refusal: %v", tr)
	}
	// Called directly, Limit's refusal has the details.
	direct := grpc.NewContextWithServerTransportStream(ctx, nopStream{method: methodSay})
	if err := s.Limit(direct); err != nil {
		t.Fatalf("a new client's first call: %v", err)
	}
	if _, qf, _ := details(t, s.Limit(direct)); qf == nil {
		t.Error("Limit's refusal has no QuotaFailure")
	}
}
