package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A reload applies envoy.headers and the draft-6 names (limit_header,
// remaining_header, reset_header) to the Envoy service's next answers, as
// docs/envoy.md says the whole configuration reloads: none, then draft-6
// with a renamed limit header, then the default (ietf).
func TestReloadAppliesTheEnvoyResponseHeaders(t *testing.T) {
	dir := t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "rules.yaml"), "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {name: per-k, unit: minute, requests_per_unit: 5}\n")
	cfgFile := filepath.Join(dir, "sluice.yaml")
	envoySection := func(headers string) string {
		return "envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n" + headers + testConfig + testAdmin
	}
	write(cfgFile, envoySection("  headers: none\n"))
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	logs := new(realtest.Buffer)
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Load:   func() (*config.Config, error) { return config.Load(cfgFile) },
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	waitEnvoy(t, srv)
	client := envoyClient(t, srv)
	headers := func() string {
		t.Helper()
		resp, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "a",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "k", Value: "v"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, h := range resp.GetResponseHeadersToAdd() {
			b.WriteString(h.GetKey() + ": " + h.GetValue() + "\n")
		}
		return b.String()
	}
	reload := func(headers string) {
		t.Helper()
		write(cfgFile, envoySection(headers))
		if err := srv.Reload(); err != nil {
			t.Fatalf("reload refused: %v", err)
		}
	}
	if got := headers(); got != "" {
		t.Fatalf("headers: none sends\n%s", got)
	}
	reload("  headers: draft-6\n  limit_header: X-RateLimit-Limit\n")
	if got, want := headers(), "X-RateLimit-Limit: 5\nRateLimit-Remaining: 3\nRateLimit-Reset: "; !strings.HasPrefix(got, want) {
		t.Errorf("after a reload to draft-6 with limit_header:\n%s\nwant it to start with\n%s", got, want)
	}
	reload("")
	if got, want := headers(), "RateLimit-Policy: \"per-k\";q=5;w=60\nRateLimit: \"per-k\";r=2;t="; !strings.HasPrefix(got, want) {
		t.Errorf("after a reload to the default headers:\n%s\nwant it to start with\n%s", got, want)
	}
	if strings.Contains(logs.String(), "envoy response headers are refused") {
		t.Errorf("the log:\n%s", logs.String())
	}
}
