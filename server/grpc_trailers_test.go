package server_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/grpclimit"
)

// oneSlotConfig admits one call at a time.
const oneSlotConfig = `
plans:
  anonymous:
    limits: [{name: in-flight, algorithm: concurrency, quantity: 1, window: 5s}]
anonymous_plan: anonymous
`

// failingHealthBehindSluice runs a gRPC health service behind sluice serve
// (oneSlotConfig) whose next call, once fail is set, is ended by the
// service's own status code: a stream after its first message, a unary
// call at once (a trailers-only answer). It returns fail and sluice's
// public address.
func failingHealthBehindSluice(t *testing.T, code codes.Code) (fail *atomic.Bool, public string) {
	t.Helper()
	fail = new(atomic.Bool)
	gs := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if fail.CompareAndSwap(true, false) {
				return nil, grpcstatus.Error(code, "a dependency is down")
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if fail.CompareAndSwap(true, false) {
				ss.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING})
				time.Sleep(50 * time.Millisecond)
				return grpcstatus.Error(code, "a dependency is down")
			}
			return h(srv, ss)
		}))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+oneSlotConfig)
	return fail, serveOn(t, srv).public
}

// TestAStreamEndedByItsHandlersStatusBehindSluiceGivesItsSlotBack: sluice
// serve's proxy sends an admitted call's RateLimit fields in its trailers
// too, as a grpclimit.Server does. A service behind it whose handler ends
// a server stream UNAVAILABLE or DEADLINE_EXCEEDED after its first message
// (a dependency down) has ended the stream: the proxy saw it and released
// its slot of the concurrency limit. grpclimit.Pacer takes such a status
// for the server's end only when it came in trailers with RateLimit fields
// (a proxy's own trailers-only status carries none), so with them it gives
// the one slot back at once, as it does behind a grpclimit.Server
// (TestAStreamEndedByItsHandlersStatusGivesItsSlotBack), and sends the next
// call at once, not after a probe past the quota's reset.
func TestAStreamEndedByItsHandlersStatusBehindSluiceGivesItsSlotBack(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded} {
		t.Run(code.String(), func(t *testing.T) {
			fail, public := failingHealthBehindSluice(t, code)
			pacer := &grpclimit.Pacer{MaxWait: 20 * time.Second}
			hc := healthpb.NewHealthClient(dialInsecure(t, public, grpc.WithUnaryInterceptor(pacer.UnaryInterceptor()), grpc.WithStreamInterceptor(pacer.StreamInterceptor())))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil { // learns the one slot
				t.Fatal(err)
			}
			fail.Store(true)
			stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stream.Recv(); err != nil {
				t.Fatal(err)
			}
			if _, err := stream.Recv(); grpcstatus.Code(err) != code {
				t.Fatalf("the stream's end: %v; want the handler's %v", err, code)
			}
			header, _ := stream.Header()
			if len(header.Get("date")) == 0 {
				t.Errorf("header %v; want its date, which a legacy reset is read against", header)
			}
			for _, key := range []string{"ratelimit", "ratelimit-policy"} {
				h, tr := header.Get(key), stream.Trailer().Get(key)
				if len(h) != 1 || len(tr) != 1 || tr[0] != h[0] {
					t.Errorf("%s: header %q, trailers %q; want sluice's value once in each", key, h, tr)
				}
			}
			time.Sleep(100 * time.Millisecond) // the proxy has released the slot
			start := time.Now()
			if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 300*time.Millisecond {
				t.Errorf("after a stream sluice serve admitted and the handler ended %v, the next call waited %v for the one slot; want it sent at once (the slot is free)", code, took.Round(time.Millisecond))
			}
		})
	}
}

// TestAHandlersTrailersOnlyStatusBehindSluiceCarriesTheFieldsOnce: a
// service's immediate error is a trailers-only answer, whose one header
// block carries sluice's RateLimit fields (the client reads them as the
// call's trailers): the proxy adds no trailers to it, which would turn
// its status into a header's, and the pacer gives the slot back at once.
func TestAHandlersTrailersOnlyStatusBehindSluiceCarriesTheFieldsOnce(t *testing.T) {
	fail, public := failingHealthBehindSluice(t, codes.Unavailable)
	pacer := &grpclimit.Pacer{MaxWait: 20 * time.Second}
	hc := healthpb.NewHealthClient(dialInsecure(t, public, grpc.WithUnaryInterceptor(pacer.UnaryInterceptor())))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil { // learns the one slot
		t.Fatal(err)
	}
	fail.Store(true)
	var trailer metadata.MD
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer)); grpcstatus.Code(err) != codes.Unavailable {
		t.Fatalf("the failing call: %v; want the handler's UNAVAILABLE", err)
	}
	for _, key := range []string{"ratelimit", "ratelimit-policy"} {
		if v := trailer.Get(key); len(v) != 1 {
			t.Errorf("%s: %q; want sluice's value once", key, v)
		}
	}
	start := time.Now()
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 300*time.Millisecond {
		t.Errorf("after the handler's trailers-only UNAVAILABLE, the next call waited %v for the one slot; want it sent at once", took.Round(time.Millisecond))
	}
}
