package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// An Envoy call whose deadline (Envoy's rate limit timeout, 20 ms by
// default, as grpc-timeout) has passed is one its caller left: it is not
// counted in sluice_undecided_total, whose help says so and whose alert
// (SluiceUndecided, critical) sends the operator to the store.
func TestEnvoyCallPastItsDeadlineIsNotUndecided(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 2}\n"), 0o644)
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\nplans:\n  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]}\n"), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	primary := memory.New(memory.WithSweepInterval(0))
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { primary.Close(); local.Close() })
	fo, err := failover.New(primary, local, failover.Options{OnError: failover.Local})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Store: fo, Failover: fo, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if srv.envoy == nil {
		t.Fatal("no Envoy service")
	}
	// The call's deadline (Envoy's timeout, as grpc-timeout) has passed.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	_, err = srv.envoy.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "edge",
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0.1"}}}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call past its deadline: %v, want one wrapping context.DeadlineExceeded", err)
	}
	if got := undecidedTotal(t, srv); got != 0 {
		t.Errorf("sluice_undecided_total = %v after one Envoy call that timed out (the caller left; the store did not fail), want 0", got)
	}
}

// A gRPC call through the proxy whose grpc-timeout has passed before its
// decision is one its caller left too: not counted as undecided.
func TestProxiedGRPCCallPastItsTimeoutIsNotUndecided(t *testing.T) {
	cfg, err := config.Parse("sluice.yaml", []byte(`
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]}
default_plan: free
anonymous_plan: free
`))
	if err != nil {
		t.Fatal(err)
	}
	primary := memory.New(memory.WithSweepInterval(0))
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { primary.Close(); local.Close() })
	fo, err := failover.New(primary, local, failover.Options{OnError: failover.Local})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Store: fo, Failover: fo, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/pkg.Service/Method", nil)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Grpc-Timeout", "1n")
	srv.PublicHandler().ServeHTTP(httptest.NewRecorder(), req)
	if got := undecidedTotal(t, srv); got != 0 {
		t.Errorf("sluice_undecided_total = %v after one gRPC call past its grpc-timeout (the caller left; the store did not fail), want 0", got)
	}
}

// undecidedTotal returns srv's sluice_undecided_total.
func undecidedTotal(t *testing.T, srv *Server) float64 {
	t.Helper()
	mfs, err := srv.opts.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "sluice_undecided_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no sluice_undecided_total")
	return 0
}

// callerLeft tells a failure of the caller's (its request's context ended)
// from one of sluice's, which sluice_undecided_total counts: a store's own
// timeout is sluice's even though it wraps context.DeadlineExceeded.
func TestCallerLeftIsTheRequestsContextNotTheStoresTimeout(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		left bool
	}{
		{"an HTTP client that hung up", fmt.Errorf("failover: caller gave up: %w (primary store: refused)", context.Canceled), true},
		{"a gRPC call past its grpc-timeout", fmt.Errorf("failover: caller gave up: %w (primary store: i/o timeout)", context.DeadlineExceeded), true},
		{"an Envoy call past its timeout", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), true},
		{"an Envoy call cancelled", status.Error(codes.Canceled, "context canceled"), true},
		{"the store's own timeout, its fallback failing too",
			fmt.Errorf("failover: %w; local fallback: %w", fmt.Errorf("%w: primary store: %w", sluice.ErrStoreUnavailable, context.DeadlineExceeded), errors.New("full")), false},
		{"the store's own timeout through the Envoy service", status.Error(codes.Unavailable, "store unavailable: context deadline exceeded"), false},
		{"the store down", fmt.Errorf("redis: %w", sluice.ErrStoreUnavailable), false},
	} {
		if got := callerLeft(c.err); got != c.left {
			t.Errorf("%s (%v): callerLeft = %v, want %v", c.name, c.err, got, c.left)
		}
	}
}
