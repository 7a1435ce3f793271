package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Connections to the Envoy service that make no call — a stranger's, who
// may open them but not call — are closed, the longest idle first, to make
// room for Envoy's when the listener holds connections.max: holding them
// open locks no caller out.
func TestEnvoyIdleConnectionsMakeRoomForCallers(t *testing.T) {
	srv := startEnvoyWith(t, `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 100}
`, "connections: {max: 2}\n")
	for range 2 {
		c, err := net.Dial("tcp", srv.EnvoyAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(100 * time.Millisecond) // both are accepted
	conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{
		{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "203.0.113.1"}}}}}
	for i := range 3 {
		resp, err := rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, req, grpc.WaitForReady(true))
		if err != nil || resp.OverallCode != rlsv3.RateLimitResponse_OK {
			t.Fatalf("call %d with the listener full of idle connections: %v %v, want OK", i, resp, err)
		}
	}
}

// A connection whose calls are admitted is the last closed to make room:
// strangers who open connections one after another close each other's,
// never Envoy's, which keeps calling on the connection it has.
func TestEnvoyCallersKeepTheirConnectionWhileStrangersComeAndGo(t *testing.T) {
	srv := startEnvoyWith(t, `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 100}
`, "connections: {max: 2}\n")
	var dials atomic.Int64
	conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(testToken),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{
		{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "203.0.113.1"}}}}}
	call := func(when string) {
		t.Helper()
		resp, err := rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, req, grpc.WaitForReady(true))
		if err != nil || resp.OverallCode != rlsv3.RateLimitResponse_OK {
			t.Fatalf("call %s: %v %v, want OK", when, resp, err)
		}
	}
	call("first")
	var strangers []net.Conn
	for i := range 3 {
		s, err := net.Dial("tcp", srv.EnvoyAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		strangers = append(strangers, s)
		time.Sleep(100 * time.Millisecond) // accepted, closing the longest idle if full
		call(fmt.Sprintf("after stranger %d", i+1))
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the caller dialed %d times, want 1: its connection was closed for a stranger's", n)
	}
	for i, s := range strangers[:2] {
		s.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, s); err != nil {
			t.Errorf("stranger %d's connection: %v, want it closed for the next", i+1, err)
		}
	}
}
