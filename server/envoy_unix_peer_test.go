package server_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-dev/sluice/server"
)

// The Envoy service on a Unix-domain socket (Listeners.Envoy; Envoy
// reaches a rate limit service over a pipe address) grants no loopback
// scope by the path a client bound its end of the socket to: that path is
// the client's choice and may read as an address ("127.0.0.1:1"), so a
// Unix peer has no IP address, as on the admin listener (peerIP). With
// admin.loopback_scopes: [check], a client of the socket without a token
// is refused, unbound or bound to "127.0.0.1:1" or "[::1]:1".
func TestAnEnvoyUnixPeerIsNoLoopbackCallerByThePathItBound(t *testing.T) {
	t.Chdir(t.TempDir()) // the client binds a relative path: it is made here
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 100}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, _ := loadServer(t, dir, "upstream: http://127.0.0.1:1\nenvoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+
		"admin:\n  loopback_scopes: [check]\n")
	eln, err := net.Listen("unix", "envoy.sock")
	if err != nil {
		t.Fatalf("a Unix socket: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(ctx, server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t), Envoy: eln})
	}()
	defer func() { cancel(); <-done }()
	ask := func(bound string) error {
		d := net.Dialer{}
		if bound != "" {
			d.LocalAddr = &net.UnixAddr{Net: "unix", Name: bound}
		}
		conn, err := grpc.NewClient("passthrough:///envoy.sock", grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", "envoy.sock") }))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		_, err = rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(cctx, &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "198.51.100.1"}}}}},
			grpc.WaitForReady(true))
		return err
	}
	if err := ask(""); err == nil {
		t.Fatal("an unbound Unix client without a token was admitted: the premise (a Unix peer holds no loopback scope) does not hold")
	}
	for _, bound := range []string{"127.0.0.1:1", "[::1]:1"} {
		if err := ask(bound); err == nil {
			t.Errorf("a Unix client of the Envoy service bound to %q, without a token, was admitted with loopback's check scope; an unbound one is refused (the path is the client's choice)", bound)
		}
	}
}
