package server_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// The warning of an admin listener reachable without TLS, which suggests a
// TLS proxy on loopback in front of it, says what that costs while loopback
// holds scopes: every caller of the proxy arrives from loopback and holds
// them, token or not.
func TestExposureWarningSaysAProxyOnLoopbackGetsLoopbackScopes(t *testing.T) {
	warning := func(t *testing.T, text string) string {
		t.Helper()
		cfg, err := config.Parse("sluice.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		var logs realtest.Buffer
		store := memory.New()
		defer store.Close()
		srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		adm, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, server.Listeners{Public: listenLoopback(t), Admin: adm}) }()
		for start := time.Now(); !strings.Contains(logs.String(), "sluice serving") && time.Since(start) < 5*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, "reachable beyond this host without TLS") {
				return line
			}
		}
		t.Fatalf("no exposure warning:\n%s", logs.String())
		return ""
	}
	const plans = "plans:\n  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]}\n"
	if w := warning(t, plans); !strings.Contains(w, "admin.loopback_scopes: []") {
		t.Errorf("with loopback's default scopes (read), the warning does not say to take them away behind a proxy: %s", w)
	}
	if w := warning(t, plans+"admin:\n  loopback_scopes: []\n"); strings.Contains(w, "loopback_scopes") {
		t.Errorf("with no loopback scopes, the warning still speaks of them: %s", w)
	}
}
