package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// The handler benchmarks run the server's handlers in process, without the
// network, on the configuration of make bench's server part (a plan of 3
// limits that never refuses, 1,000 API keys listed by SHA-256): the CPU and
// allocations sluice itself spends per request, net/http's server aside.

const benchKeys = 1000

func benchServer(b *testing.B) (http.Handler, []string) {
	b.Helper()
	keys := make([]string, benchKeys)
	var cfg strings.Builder
	cfg.WriteString("identity:\n  api_key_headers: [X-API-Key]\nplans:\n  bench:\n    limits:\n" +
		"      - {name: per-second, algorithm: gcra, quantity: 1000000000, window: 1s}\n" +
		"      - {name: per-minute, algorithm: sliding-window-counter, quantity: 1000000000, window: 1m}\n" +
		"      - {name: per-day, algorithm: fixed-window, quantity: 1000000000, window: 24h}\n" +
		"default_plan: bench\n" + testAdmin + "keys:\n")
	for i := range keys {
		keys[i] = fmt.Sprintf("bench-key-%d", i)
		sum := sha256.Sum256([]byte(keys[i]))
		fmt.Fprintf(&cfg, "  - {name: k%d, sha256: %s, plan: bench}\n", i, hex.EncodeToString(sum[:]))
	}
	c, err := config.Parse("bench.yaml", []byte(cfg.String()))
	if err != nil {
		b.Fatal(err)
	}
	store := memory.New()
	b.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: c, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return srv.AdminHandler(), keys
}

// rewindBody is a request body that can be read again.
type rewindBody struct{ strings.Reader }

func (*rewindBody) Close() error { return nil }

func BenchmarkDecisionAPI(b *testing.B) {
	h, keys := benchServer(b)
	reqs := make([]*http.Request, len(keys))
	bodies := make([]*rewindBody, len(keys))
	for i, k := range keys {
		bodies[i] = &rewindBody{}
		bodies[i].Reset(`{"api_key":"` + k + `","method":"GET","path":"/v1/items"}`)
		reqs[i] = httptest.NewRequest(http.MethodPost, "/v1/check", bodies[i])
		reqs[i].Header.Set("Content-Type", "application/json")
		reqs[i].Header.Set(server.TokenHeader, testToken)
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		bodies[i].Seek(0, io.SeekStart)
		w.reset()
		h.ServeHTTP(w, reqs[i])
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
		i = (i + 1) % len(reqs)
	}
}

func BenchmarkForwardAuth(b *testing.B) {
	h, keys := benchServer(b)
	reqs := make([]*http.Request, len(keys))
	for i, k := range keys {
		r := httptest.NewRequest(http.MethodGet, "/v1/forward-auth", nil)
		r.Header.Set("X-Forwarded-Method", "GET")
		r.Header.Set("X-Forwarded-Uri", "/v1/items?page=2")
		r.Header.Set("X-Forwarded-Host", "api.example")
		r.Header.Set("X-API-Key", k)
		r.Header.Set(server.TokenHeader, testToken)
		reqs[i] = r
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, reqs[i])
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
		i = (i + 1) % len(reqs)
	}
}

func BenchmarkEnvoyShouldRateLimit(b *testing.B) {
	dir := b.TempDir()
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, []byte("domain: bench\ndescriptors:\n  - key: client\n"+
		"    rate_limit: {name: per-second, unit: second, requests_per_unit: 1000000000, algorithm: gcra}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := envoy.LoadRuleFiles(rules)
	if err != nil {
		b.Fatal(err)
	}
	store := memory.New()
	b.Cleanup(func() { store.Close() })
	svc, err := envoy.NewService(sluice.NewLimiter(store), r, envoy.Options{Headers: "ietf"})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*rlsv3.RateLimitRequest, benchKeys)
	for i := range reqs {
		reqs[i] = &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{{
			Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "client", Value: fmt.Sprintf("c-%d", i)}}}}}
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		resp, err := svc.ShouldRateLimit(ctx, reqs[i])
		if err != nil || resp.OverallCode != rlsv3.RateLimitResponse_OK {
			b.Fatalf("%v %v", resp, err)
		}
		i = (i + 1) % len(reqs)
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) reset() {
	clear(w.h)
	w.status = 0
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}

func (w *discardWriter) WriteHeader(status int) { w.status = status }
