package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

func TestEnvoyServiceServedAndReloaded(t *testing.T) {
	dir := t.TempDir()
	rules := func(n int) string {
		return "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: " +
			string(rune('0'+n)) + "}\n"
	}
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(rules(2)), 0o644)
	cfgFile := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(cfgFile, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+testAdmin), 0o644)
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	// The store's clock stands still at noon: the rules are per-minute
	// fixed windows, and on the wall clock a minute that ended among the
	// requests gave the client its quantity again.
	still := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0))
	srv, err := server.New(server.Options{Config: cfg, Store: still,
		Load:   func() (*config.Config, error) { return config.Load(cfgFile) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	ctx := context.Background()
	waitEnvoy(t, srv)
	client := envoyClient(t, srv)
	ask := func(ip string) rlsv3.RateLimitResponse_Code {
		resp, err := client.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: ip}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.OverallCode
	}
	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT} {
		if got := ask("198.51.100.1"); got != want {
			t.Fatalf("request %d: %v, want %v", i, got, want)
		}
	}
	// A broken rules file is refused; the old rules keep serving.
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("domain: edge\ndescriptors: nope\n"), 0o644)
	if err := srv.Reload(); err == nil || !strings.Contains(err.Error(), "rules.yaml:2:") {
		t.Fatalf("bad rules reload: %v", err)
	}
	if got := ask("198.51.100.2"); got != rlsv3.RateLimitResponse_OK {
		t.Fatalf("after a refused reload: %v", got)
	}
	// New rules apply after a good reload.
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(rules(5)), 0o644)
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := ask("198.51.100.1"); got != rlsv3.RateLimitResponse_OK {
		t.Fatalf("the raised limit was not applied: %v", got)
	}
	body := readAllURL(t, "http://"+addrs.admin+"/metrics")
	if !strings.Contains(body, `sluice_decisions_total{limit="per-ip",policy="edge",result="limited"} 1`) {
		t.Errorf("metrics lack the Envoy decisions:\n%.3000s", body)
	}
}

// envoyClient returns a client of srv's Envoy service, which must listen,
// calling with the tests' token, closed when the test ends.
func envoyClient(t *testing.T, srv *server.Server) rlsv3.RateLimitServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return rlsv3.NewRateLimitServiceClient(conn)
}

// waitEnvoy waits until srv's Envoy service listens.
func waitEnvoy(t *testing.T, srv *server.Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for srv.EnvoyAddr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the Envoy service did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readAllURL(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestEnvoyCallersAreAuthenticated: Envoy's rate limit service answers only
// callers with the check scope; a call without a token, or with one nobody
// holds, is refused before it is read (Unauthenticated) and spends nothing.
func TestEnvoyCallersAreAuthenticated(t *testing.T) {
	srv := startEnvoy(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 1}\n")
	ask := func(token string) (rlsv3.RateLimitResponse_Code, error) {
		conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(token))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		resp, err := rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "198.51.100.9"}}}}})
		return resp.GetOverallCode(), err
	}
	for _, token := range []string{"", "guess"} {
		if _, err := ask(token); grpcstatus.Code(err) != codes.Unauthenticated {
			t.Errorf("token %q: %v, want Unauthenticated", token, err)
		}
	}
	// The one unit of 198.51.100.9 is still there.
	if code, err := ask(testToken); err != nil || code != rlsv3.RateLimitResponse_OK {
		t.Errorf("the caller after the strangers: %v %v, want OK", code, err)
	}
}
