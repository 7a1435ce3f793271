package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/server"
)

// healthRetrying is a service config whose retryPolicy (gRFC A6) retries
// the health service's UNAVAILABLE and RESOURCE_EXHAUSTED answers after
// 10 ms of its own backoff, up to 4 attempts in all: what a client of a
// service commonly sets.
const healthRetrying = `{"methodConfig": [{"name": [{"service": "grpc.health.v1.Health"}],
	"retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
	"backoffMultiplier": 1, "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]}}]}`

// attempts is a gRPC client's stats.Handler that records when each
// attempt of its calls began, grpc-go's own retries included: each is a
// call sent to sluice serve and decided there (transparent retries, of
// streams that never reached the server, are not counted).
type attempts struct {
	mu sync.Mutex
	at []time.Time
}

func (a *attempts) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (a *attempts) HandleRPC(_ context.Context, s stats.RPCStats) {
	if b, ok := s.(*stats.Begin); ok && !b.IsTransparentRetryAttempt {
		a.mu.Lock()
		a.at = append(a.at, b.BeginTime)
		a.mu.Unlock()
	}
}

func (a *attempts) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (a *attempts) HandleConn(context.Context, stats.ConnStats) {}

// since returns the times of the attempts begun from the n-th on.
func (a *attempts) since(n int) []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.at[min(n, len(a.at)):]...)
}

// pushbackOf is the grpc-retry-pushback-ms of md, "" when it has none.
func pushbackOf(md metadata.MD) string { return strings.Join(md.Get("grpc-retry-pushback-ms"), ",") }

// A call that sluice serve's limits refuse tells grpc-go's own retries (a
// service config's retryPolicy, which read grpc-retry-pushback-ms and
// never RetryInfo) when to come back: its Retry-After in milliseconds. The
// refused call reaches the limiter once, and its one retry comes after
// that wait, not after the policy's 10 ms backoff, and is admitted; the
// admitted attempt's trailers carry no pushback.
func TestGRPCsOwnRetryComesBackToSluiceServesRefusalAfterItsWait(t *testing.T) {
	_, addrs := grpcBehindSluiceWith(t, strings.Replace(grpcConfig, "quantity: 3, window: 1m", "quantity: 1, window: 1s", 1))
	var sent attempts
	hc := healthpb.NewHealthClient(dialInsecure(t, addrs.public, grpc.WithDefaultServiceConfig(healthRetrying), grpc.WithStatsHandler(&sent)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	var trailer metadata.MD
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer)); err != nil {
		t.Fatalf("the refused call was not retried to admission: %v (attempts at %v)", err, sent.since(1))
	}
	at := sent.since(1)
	if len(at) != 2 {
		t.Fatalf("the refused call was sent %d times, want twice: refused once, admitted after its wait", len(at))
	}
	if waited := at[1].Sub(at[0]); waited < time.Second {
		t.Errorf("retried %v after the refusal, before its Retry-After of 1s", waited)
	}
	if got := pushbackOf(trailer); got != "" {
		t.Errorf("the admitted attempt carries grpc-retry-pushback-ms %q", got)
	}
}

// A degraded level's refusal of a gRPC call (UNAVAILABLE, RetryInfo of
// its Retry-After) carries the same wait as grpc-retry-pushback-ms.
func TestADegradedLevelsGRPCRefusalCarriesItsWaitAsPushback(t *testing.T) {
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
	var trailer metadata.MD
	err = dialInsecure(t, addrs.public).Invoke(context.Background(), "/orders.v1.Orders/Get",
		&healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{}, grpc.Trailer(&trailer))
	if grpcstatus.Code(err) != codes.Unavailable || pushbackOf(trailer) != "7000" {
		t.Errorf("at level critical: %v, grpc-retry-pushback-ms %q; want UNAVAILABLE, 7000", err, pushbackOf(trailer))
	}
}

// The proxy's own answer when the upstream cannot be reached (502,
// UNAVAILABLE) is a failure that a retry may cure, no refusal: it carries
// no grpc-retry-pushback-ms, so a service config's retryPolicy retries it
// as it would any UNAVAILABLE, after its own backoff, up to its attempts.
func TestTheProxysOwnGRPCFailureCarriesNoPushback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+down+"\n"+strings.Replace(grpcConfig, "quantity: 3,", "quantity: 1000,", 1))
	addrs := serveOn(t, srv)
	var sent attempts
	hc := healthpb.NewHealthClient(dialInsecure(t, addrs.public, grpc.WithDefaultServiceConfig(healthRetrying), grpc.WithStatsHandler(&sent)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var trailer metadata.MD
	_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	if grpcstatus.Code(err) != codes.Unavailable || pushbackOf(trailer) != "" {
		t.Errorf("upstream down: %v, grpc-retry-pushback-ms %q; want UNAVAILABLE and none", err, pushbackOf(trailer))
	}
	if n := len(sent.since(0)); n != 4 {
		t.Errorf("the call was sent %d times, want 4: the policy's retries of a failure", n)
	}
}

// A refusal of sluice serve whose wait ends after the call's deadline (its
// grpc-timeout) tells grpc-go's own retries not to retry (-1): the refused
// call reaches the limiter once, and its caller reads the refusal at once,
// RESOURCE_EXHAUSTED with its details, not DEADLINE_EXCEEDED after a wait
// for a retry that could not be admitted.
func TestGRPCsOwnRetryLeavesSluiceServesRefusalPastTheDeadline(t *testing.T) {
	_, addrs := grpcBehindSluiceWith(t, grpcConfig) // 3 a minute: a 4th call waits 20 s
	var sent attempts
	hc := healthpb.NewHealthClient(dialInsecure(t, addrs.public, grpc.WithDefaultServiceConfig(healthRetrying), grpc.WithStatsHandler(&sent)))
	for i := range 3 {
		if _, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	var trailer metadata.MD
	_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
	if grpcstatus.Code(err) != codes.ResourceExhausted || pushbackOf(trailer) != "-1" || time.Since(start) > time.Second {
		t.Errorf("a call refused for 20 s with 2 s to live: %v after %v, grpc-retry-pushback-ms %q; want RESOURCE_EXHAUSTED at once, -1",
			err, time.Since(start).Round(time.Millisecond), pushbackOf(trailer))
	}
	if n := len(sent.since(3)); n != 1 {
		t.Errorf("the refused call was sent %d times, want once", n)
	}
}
