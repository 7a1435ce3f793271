package grpclimit_test

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // registers the "gzip" compressor on both sides
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// The sluice.test.Gzip service's Use (unary) and Consume (server
// streaming) do what Echo's do, but through the grpc functions that take
// the handler's context alone: they answer in gzip, check what the client
// accepts and the call's method, set a header, and report the tokens used
// in the x-usage-tokens trailer with grpc.SetTrailer.
const (
	methodGzipUse     = "/sluice.test.Gzip/Use"
	methodGzipConsume = "/sluice.test.Gzip/Consume"
)

// throughContext is a handler's work on its context ctx, a call of method
// that used n tokens; a failure is an INTERNAL status naming the function
// that failed.
func throughContext(ctx context.Context, method, n string) error {
	if err := grpc.SetSendCompressor(ctx, "gzip"); err != nil {
		return status.Errorf(codes.Internal, "grpc.SetSendCompressor: %v", err)
	}
	if cs, err := grpc.ClientSupportedCompressors(ctx); err != nil || !slices.Contains(cs, "gzip") {
		return status.Errorf(codes.Internal, "grpc.ClientSupportedCompressors: %v, %v", cs, err)
	}
	if m, ok := grpc.Method(ctx); !ok || m != method {
		return status.Errorf(codes.Internal, "grpc.Method: %q, %v", m, ok)
	}
	if err := grpc.SetHeader(ctx, metadata.Pairs("x-handler", "set")); err != nil {
		return status.Errorf(codes.Internal, "grpc.SetHeader: %v", err)
	}
	if err := grpc.SetTrailer(ctx, metadata.Pairs("x-usage-tokens", n)); err != nil {
		return status.Errorf(codes.Internal, "grpc.SetTrailer: %v", err)
	}
	return nil
}

var gzipService = grpc.ServiceDesc{
	ServiceName: "sluice.test.Gzip",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Use", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		use := func(ctx context.Context, req any) (any, error) {
			if err := throughContext(ctx, methodGzipUse, req.(*wrapperspb.StringValue).Value); err != nil {
				return nil, err
			}
			if err := grpc.SendHeader(ctx, nil); err != nil {
				return nil, status.Errorf(codes.Internal, "grpc.SendHeader: %v", err)
			}
			return req, nil
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodGzipUse}, use)
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Consume", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		if err := throughContext(ss.Context(), methodGzipConsume, in.Value); err != nil {
			return err
		}
		return ss.SendMsg(in)
	}}},
}

// A handler under a limit that counts what the answer reports keeps every
// grpc function of its context: grpc.SetSendCompressor and
// grpc.ClientSupportedCompressors (which need grpc-go's own stream in the
// context), grpc.Method, SetHeader, SendHeader and SetTrailer; and the
// usage it reports through them, a unary handler's or a stream's, settles
// its call: 100 tokens, each call reserving 40, serve 10, 30, 20 and 35.
func TestHandlersKeepTheGRPCFunctionsOfTheirContext(t *testing.T) {
	t.Parallel()
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Hour).Named("tokens")},
			Costs: map[string]int64{"POST " + methodGzipUse: 40, "POST " + methodGzipConsume: 40}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	srv.RegisterService(&gzipService, nil)
	conn, err := grpc.NewClient(run(t, srv), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	ctx := context.Background()
	use := func(n string) error {
		var header metadata.MD
		err := conn.Invoke(ctx, methodGzipUse, wrapperspb.String(n), new(wrapperspb.StringValue), grpc.Header(&header))
		if err == nil && header.Get("x-handler") == nil {
			t.Errorf("Use(%s): header %v has no x-handler", n, header)
		}
		return err
	}
	consume := func(n string) error {
		cs, err := conn.NewStream(ctx, &gzipService.Streams[0], methodGzipConsume)
		if err == nil {
			err = cs.SendMsg(wrapperspb.String(n))
		}
		if err == nil {
			err = cs.CloseSend()
		}
		for err == nil {
			err = cs.RecvMsg(new(wrapperspb.StringValue))
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
	for i, err := range []error{use("10"), consume("30"), use("20"), consume("35")} {
		if err != nil {
			t.Fatalf("call %d: %v, want it served", i, err)
		}
	}
	if err := use("1"); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("call after 95 tokens used: %v, want RESOURCE_EXHAUSTED (40 do not fit in 5)", err)
	}
}

// A handler whose context holds a stream other than grpc-go's (a test's
// fake, another interceptor's wrapper) has its usage recorded as it sets
// it: three calls reserving 40 of 100 tokens and reporting 10 each are all
// served.
func TestUsageIsRecordedOnAStreamThatIsNotGRPCs(t *testing.T) {
	store := memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Hour).Named("tokens")},
			Costs: map[string]int64{"POST " + methodUse: 40}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1}})
	ctx = grpc.NewContextWithServerTransportStream(ctx, nopStream{method: methodUse})
	for i := range 3 {
		_, err := s.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: methodUse}, func(ctx context.Context, _ any) (any, error) {
			return "ok", grpc.SetTrailer(ctx, metadata.Pairs("x-usage-tokens", "10"))
		})
		if err != nil {
			t.Fatalf("call %d: %v, want it served: each used 10 tokens", i, err)
		}
	}
}
