package server_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/server"
)

// grpcConfig limits each client to three calls a minute, by its
// x-api-key metadata or its address.
const grpcConfig = `
connections: {read_timeout: 1s, write_timeout: 1s, stream_idle_timeout: 800ms}
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: gcra, quantity: 3, window: 1m}]
anonymous_plan: anonymous
response: {docs_url: "https://example.com/docs/rate-limits"}
`

// TestProxyCarriesGRPC: sluice serve in front of a gRPC service
// (upstream: h2c://…) carries its calls from a gRPC client speaking
// HTTP/2 without TLS, limits them as HTTP requests (POST /pkg.Service/Method),
// and answers a refused call as gRPC does: RESOURCE_EXHAUSTED with a
// RetryInfo no earlier than the wait, a QuotaFailure naming the limit, a
// Help link, and the RateLimit fields as trailing metadata. A server stream lives past the listener's timeouts while it
// moves messages.
func TestProxyCarriesGRPC(t *testing.T) {
	hs, public := grpcBehindSluice(t)
	client := healthpb.NewHealthClient(dialInsecure(t, public))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A stream of status changes for 2s, twice the listener's timeouts: it
	// counts as one call.
	sctx, stop := context.WithCancel(ctx)
	stream, err := client.Watch(sctx, &healthpb.HealthCheckRequest{Service: "items"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 25 {
			st := healthpb.HealthCheckResponse_SERVING
			if i%2 == 1 {
				st = healthpb.HealthCheckResponse_NOT_SERVING
			}
			hs.SetServingStatus("items", st)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	start, got := time.Now(), 0
	for time.Since(start) < 2*time.Second {
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("the stream broke after %v and %d messages: %v", time.Since(start).Round(time.Millisecond), got, err)
		}
		got++
	}
	stop()
	<-done

	// Two unary calls fit in the minute's quota of three; the third is
	// refused.
	for i := range 2 {
		var trailer metadata.MD
		if _, err := client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var header, trailer metadata.MD
	_, err = client.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header), grpc.Trailer(&trailer))
	st, _ := grpcstatus.FromError(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("the fourth call: %v, want ResourceExhausted", err)
	}
	retry, qf, help := detailsOf(st)
	if qf == nil || len(qf.Violations) != 1 || qf.Violations[0].QuotaId != "per-minute" || qf.Violations[0].QuotaMetric != "requests" ||
		qf.Violations[0].QuotaValue != 3 || qf.Violations[0].Description != "per-minute: 3 per 1m on the anonymous plan" {
		t.Errorf("refusal: QuotaFailure %v", qf)
	}
	if help == nil || len(help.Links) != 1 || help.Links[0].Url != "https://example.com/docs/rate-limits" {
		t.Errorf("refusal: Help %v, want a link to response.docs_url", help)
	}
	md := metadata.Join(header, trailer)
	ra, _ := strconv.Atoi(first(md.Get("retry-after")))
	if retry == nil || retry.RetryDelay.AsDuration() < time.Duration(ra)*time.Second || ra < 1 || ra > 60 {
		t.Errorf("refusal: RetryInfo %v, retry-after %q", retry, md.Get("retry-after"))
	}
	if first(md.Get("ratelimit")) != `"per-minute";r=0;t=`+strconv.Itoa(ra) || first(md.Get("ratelimit-policy")) != `"per-minute";q=3;w=60` {
		t.Errorf("refusal metadata: ratelimit %q, ratelimit-policy %q", md.Get("ratelimit"), md.Get("ratelimit-policy"))
	}
}

// detailsOf returns the RetryInfo, QuotaFailure and Help details of st,
// nil for each it lacks.
func detailsOf(st *grpcstatus.Status) (retry *errdetails.RetryInfo, qf *errdetails.QuotaFailure, help *errdetails.Help) {
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			retry = d
		case *errdetails.QuotaFailure:
			qf = d
		case *errdetails.Help:
			help = d
		}
	}
	return retry, qf, help
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// TestPacerLearnsTheQuotaThroughTheProxy: grpclimit.Pacer reads the
// RateLimit fields sluice serve's proxy sends in the header of admitted
// calls, so a paced client holds the call its quota has no room for
// instead of sending it to be refused.
func TestPacerLearnsTheQuotaThroughTheProxy(t *testing.T) {
	_, public := grpcBehindSluice(t)
	var pacer grpclimit.Pacer
	hc := healthpb.NewHealthClient(dialInsecure(t, public, grpc.WithUnaryInterceptor(pacer.UnaryInterceptor())))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
	if grpcstatus.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), client.ErrWaitTooLong.Error()) {
		t.Fatalf("the fourth call: %v, want the pacer's own refusal (%v)", err, client.ErrWaitTooLong)
	}
}

// TestProxyCountsGRPCCallsByTheirStatus: a limit that counts only failures
// judges a gRPC call by its grpc-status, not by the HTTP 200 every gRPC
// answer has: calls that succeed are refunded, calls answered NOT_FOUND
// are counted, and the third of those is refused.
func TestProxyCountsGRPCCallsByTheirStatus(t *testing.T) {
	_, addrs := grpcBehindSluiceWith(t, strings.Replace(grpcConfig, "algorithm: gcra, quantity: 3, window: 1m}]",
		"algorithm: sliding-window-log, quantity: 3, window: 1m, count: failures}]", 1))
	hc := healthpb.NewHealthClient(dialInsecure(t, addrs.public))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 5 {
		if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("success %d: %v", i, err)
		}
	}
	for i, want := range []codes.Code{codes.NotFound, codes.NotFound, codes.NotFound, codes.ResourceExhausted} {
		_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "unknown"})
		if got := grpcstatus.Code(err); got != want {
			t.Fatalf("failing call %d: %v, want %v", i, err, want)
		}
	}
}

// TestDegradedLevelAnswersGRPCAsUnavailable: at a level that sheds a call,
// the gRPC client reads UNAVAILABLE with the level's Retry-After as
// RetryInfo, not a 503 page. The gRPC health protocol's Check is never
// shed (class health): a real grpc-go probe still reaches the service.
func TestDegradedLevelAnswersGRPCAsUnavailable(t *testing.T) {
	_, addrs := grpcBehindSluiceWith(t, grpcConfig+testAdmin+`
degradation:
  retry_after: 7s
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`)
	req, _ := http.NewRequest("PUT", "http://"+addrs.admin+"/v1/degradation", strings.NewReader(`{"level":"critical"}`))
	req.Header.Set(server.TokenHeader, testToken)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pinning the level: %d", resp.StatusCode)
	}
	conn := dialInsecure(t, addrs.public)
	err = conn.Invoke(context.Background(), "/orders.v1.Orders/Get", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	st, _ := grpcstatus.FromError(err)
	retry, _, _ := detailsOf(st)
	if st.Code() != codes.Unavailable || retry == nil || retry.RetryDelay.AsDuration() != 7*time.Second {
		t.Fatalf("at level critical: %v, RetryInfo %v; want Unavailable after 7s", err, retry)
	}
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("a gRPC health check at level critical: %v, want the service's answer", err)
	}
}

// TestGRPCFailuresRaiseTheErrorRate: a gRPC service failing its calls
// (UNAVAILABLE, in trailers behind an HTTP 200) raises the degradation
// level that enters at an error rate of 0.5, as an HTTP upstream's 503s do.
func TestGRPCFailuresRaiseTheErrorRate(t *testing.T) {
	gs := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return grpcstatus.Error(codes.Unavailable, "the service is down")
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+strings.Replace(grpcConfig, "quantity: 3,", "quantity: 1000,", 1)+`
degradation:
  min_answers: 1
  interval: 25ms
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`)
	addrs := serveOn(t, srv)
	conn := dialInsecure(t, addrs.public)
	deadline := time.Now().Add(5 * time.Second)
	for srv.Degradation().Level == degrade.Normal && time.Now().Before(deadline) {
		err := conn.Invoke(context.Background(), "/orders.v1.Orders/Get", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
		if grpcstatus.Code(err) != codes.Unavailable {
			t.Fatalf("a call to the failing service: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := srv.Degradation().Level; l != degrade.Elevated {
		t.Fatalf("level %v after 5s of failing gRPC calls, want elevated", l)
	}
}

// grpcBehindSluice runs a gRPC health service and sluice serve in front of
// it (grpcConfig, upstream h2c://…), returning the service's statuses and
// the address of sluice's public listener.
func grpcBehindSluice(t *testing.T) (*health.Server, string) {
	t.Helper()
	hs, addrs := grpcBehindSluiceWith(t, grpcConfig)
	return hs, addrs.public
}

// grpcBehindSluiceWith is grpcBehindSluice with the configuration cfg,
// returning both of sluice's listeners.
func grpcBehindSluiceWith(t *testing.T, cfg string) (*health.Server, listening) {
	t.Helper()
	hs := health.NewServer()
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, hs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+cfg)
	return hs, serveOn(t, srv)
}

// dialInsecure is a gRPC connection to addr over HTTP/2 without TLS,
// closed when the test ends.
func dialInsecure(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
