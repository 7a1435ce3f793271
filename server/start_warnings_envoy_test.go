package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Envoy's gRPC listener has the admin listener's callers and TLS, so a
// caller's token travels in every call's metadata: one reachable beyond
// this host without admin.tls is warned of as the admin listener is, even
// with the admin listener on loopback. One on loopback says nothing.
func TestStartWarnsOfAnEnvoyListenerBeyondLoopbackWithoutTLS(t *testing.T) {
	dir := t.TempDir()
	rules := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 100}\n"
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, envoyListen string) string {
		file := filepath.Join(dir, "sluice.yaml")
		text := "envoy:\n  listen: \"" + envoyListen + "\"\n  rules: [rules.yaml]\n" + testConfig + testAdmin
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		var logs realtest.Buffer
		store := memory.New(memory.WithSweepInterval(0))
		defer store.Close()
		srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- srv.Serve(ctx, server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)})
		}()
		for start := time.Now(); !strings.Contains(logs.String(), "sluice serving") && time.Since(start) < 5*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		return logs.String()
	}
	const want = "Envoy listener (envoy.listen, which has the admin listener's callers and TLS) is reachable beyond this host without TLS"
	if logs := start(t, ":0"); !strings.Contains(logs, want) {
		t.Errorf("envoy.listen on every interface without admin.tls: the log lacks %q:\n%s", want, logs)
	}
	if logs := start(t, "127.0.0.1:0"); strings.Contains(logs, "without TLS") {
		t.Errorf("envoy.listen on loopback warned:\n%s", logs)
	}
}
