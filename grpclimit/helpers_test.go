package grpclimit_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The test service, sluice.test.Echo, is declared by hand over protobuf's
// well-known wrappers: Say (unary) echoes its string, Heavy (unary) too,
// and Count (server streaming) sends n strings for a request "n".
const (
	methodSay   = "/sluice.test.Echo/Say"
	methodHeavy = "/sluice.test.Echo/Heavy"
	methodCount = "/sluice.test.Echo/Count"
)

func unary(name string) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		echo := func(ctx context.Context, req any) (any, error) { return req, nil }
		if ic == nil {
			return echo(ctx, in)
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/sluice.test.Echo/" + name}, echo)
	}}
}

var countStream = grpc.StreamDesc{StreamName: "Count", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	for range 3 {
		if err := ss.SendMsg(wrapperspb.String(in.Value)); err != nil {
			return err
		}
	}
	return nil
}}

// useMethod (Use) echoes its string and reports it as the tokens the call
// used, in its x-usage-tokens trailer; consumeStream (Consume, server
// streaming) does the same on a stream.
var useMethod = grpc.MethodDesc{MethodName: "Use", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.StringValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	use := func(ctx context.Context, req any) (any, error) {
		return req, grpc.SetTrailer(ctx, metadata.Pairs("x-usage-tokens", req.(*wrapperspb.StringValue).Value))
	}
	if ic == nil {
		return use(ctx, in)
	}
	return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodUse}, use)
}}

var consumeStream = grpc.StreamDesc{StreamName: "Consume", ServerStreams: true, Handler: func(srv any, ss grpc.ServerStream) error {
	in := new(wrapperspb.StringValue)
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	ss.SetTrailer(metadata.Pairs("x-usage-tokens", in.Value))
	return ss.SendMsg(in)
}}

const (
	methodUse     = "/sluice.test.Echo/Use"
	methodConsume = "/sluice.test.Echo/Consume"
)

var echoService = grpc.ServiceDesc{
	ServiceName: "sluice.test.Echo",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{unary("Say"), unary("Heavy"), useMethod},
	Streams:     []grpc.StreamDesc{countStream, consumeStream},
}

// certs returns TLS configurations of a server whose certificate, made
// now, names 127.0.0.1, and of a client that trusts it.
func certs(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	ca := testpki.New(t, "grpclimit test CA")
	return &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "server")}, MinVersion: tls.VersionTLS13},
		&tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS13}
}

// decision is one call the server's limiter decided, as its Observer saw it.
type decision struct {
	at         time.Time
	allowed    bool
	subject    string
	retryAfter time.Duration
}

// testServer is a real gRPC server over TLS on loopback, limited by a
// grpclimit.Server of o (memory store), and a client connection to it.
type testServer struct {
	conn *grpc.ClientConn
	// dial makes another client connection to the server.
	dial func(opts ...grpc.DialOption) *grpc.ClientConn
	mu   sync.Mutex
	log  []decision
}

func (s *testServer) decisions() []decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]decision(nil), s.log...)
}

func (s *testServer) refused() int {
	n := 0
	for _, d := range s.decisions() {
		if !d.allowed {
			n++
		}
	}
	return n
}

func start(t testing.TB, o grpclimit.Options, dial ...grpc.DialOption) *testServer {
	t.Helper()
	// An exact clock: the default one decides admissions at a cached time,
	// which a loaded machine delays by up to ~100 ms; the pacer then learns
	// across the lag (see client's lagAllowance), which the pacing tests
	// and benchmark do not measure.
	return startOn(t, memory.New(memory.WithClockResolution(0)), o, dial...)
}

// startStill is start on a store whose clock stands still at stillAt, for
// tests that count the admissions of a window aligned to the wall clock
// (on the wall clock, a window that ends between two calls admits its
// quantity again). A window there never ends: a refusal's wait is the
// rest of it, however long the test runs.
func startStill(t testing.TB, o grpclimit.Options, dial ...grpc.DialOption) *testServer {
	t.Helper()
	return startOn(t, memory.New(memory.WithClock(func() time.Time { return stillAt }), memory.WithSweepInterval(0)), o, dial...)
}

// stillAt is the time of startStill's store: 30 s into a minute and an
// hour.
var stillAt = time.Date(2026, time.January, 5, 10, 20, 30, 0, time.UTC)

// startOn is start on store, which it closes when t ends.
func startOn(t testing.TB, store *memory.Store, o grpclimit.Options, dial ...grpc.DialOption) *testServer {
	t.Helper()
	ts := &testServer{}
	o.Limits.Observer = func(res *httplimit.Result, _ time.Duration, err error) {
		if err == nil {
			ts.mu.Lock()
			ts.log = append(ts.log, decision{at: time.Now(), allowed: res.Decision.Allowed,
				subject: res.Identity.Subject, retryAfter: res.Decision.RetryAfter})
			ts.mu.Unlock()
		}
	}
	t.Cleanup(func() { store.Close() })
	limits, err := grpclimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, clientTLS := certs(t)
	addr := run(t, grpc.NewServer(grpc.Creds(credentials.NewTLS(serverTLS)),
		grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()), grpc.ChainStreamInterceptor(limits.StreamInterceptor())))
	ts.dial = func(opts ...grpc.DialOption) *grpc.ClientConn {
		conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(clientTLS))}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	ts.conn = ts.dial(dial...)
	return ts
}

// say calls Say with metadata kv (key, value, …) and returns the call's
// trailers and error.
func say(ctx context.Context, conn *grpc.ClientConn, method string, kv ...string) (metadata.MD, error) {
	var trailer metadata.MD
	ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	err := conn.Invoke(ctx, method, wrapperspb.String("hi"), new(wrapperspb.StringValue), grpc.Trailer(&trailer))
	return trailer, err
}

// count opens a Count stream with metadata kv, reads it to its end and
// returns how many messages came, its trailers and its error.
func count(ctx context.Context, conn *grpc.ClientConn, kv ...string) (int, metadata.MD, error) {
	ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	cs, err := conn.NewStream(ctx, &countStream, methodCount)
	if err != nil {
		return 0, nil, err
	}
	if err := cs.SendMsg(wrapperspb.String("n")); err != nil {
		return 0, nil, err
	}
	if err := cs.CloseSend(); err != nil {
		return 0, nil, err
	}
	n := 0
	for {
		err := cs.RecvMsg(new(wrapperspb.StringValue))
		if err == io.EOF {
			return n, cs.Trailer(), nil
		}
		if err != nil {
			return n, cs.Trailer(), err
		}
		n++
	}
}

func plan(name string, limits ...sluice.Limit) *httplimit.Plan {
	return &httplimit.Plan{Name: name, Limits: limits}
}

func prefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// run registers the test service on srv and serves it on a loopback port
// until the test ends; it returns the port's address.
func run(t testing.TB, srv *grpc.Server) string {
	t.Helper()
	srv.RegisterService(&echoService, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// serveWith starts a gRPC server of the test service without TLS, with
// opt, and returns a client connection to it dialled with dial.
func serveWith(t testing.TB, opt grpc.ServerOption, dial ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(run(t, grpc.NewServer(opt)), append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// nopStream is the server transport stream of a call to method outside a
// server, for calling Server.Limit directly.
type nopStream struct{ method string }

func (s nopStream) Method() string             { return s.method }
func (nopStream) SetHeader(metadata.MD) error  { return nil }
func (nopStream) SendHeader(metadata.MD) error { return nil }
func (nopStream) SetTrailer(metadata.MD) error { return nil }
