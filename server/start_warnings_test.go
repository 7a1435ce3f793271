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

// A server started in a way that exposes it says so in its log: an admin
// listener reachable beyond the host without TLS (its callers' tokens
// cross the network in clear), and trusted_proxies that trust every peer
// (any client then chooses its own address and identity headers); and a
// memory store too small for its longest sliding log, whose client may be
// refused for want of room before its limit; and a proxy that matches
// requests by a Host its upstream never sees (the client picks it). A
// loopback admin listener, named proxies, a store large enough and
// routes by path say nothing.
func TestStartWarnsOfWhatExposesTheServer(t *testing.T) {
	const exposed = `
identity:
  trusted_proxies: [0.0.0.0/0]
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]}
store: {type: memory, max_keys: 1000}
rules: [{name: logins, match: {paths: [/login]}, limits: [{name: h, algorithm: sliding-window-log, quantity: 40, window: 1h}]}]
upstream: http://127.0.0.1:9
exempt: ["status.example.com/"]
admin:
  callers:
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read]}
`
	const quiet = `
identity:
  trusted_proxies: [10.0.0.0/8]
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]}
store: {type: memory, max_keys: 5120}
rules: [{name: logins, match: {paths: [/login]}, limits: [{name: h, algorithm: sliding-window-log, quantity: 40, window: 1h}]}]
upstream: http://127.0.0.1:9
exempt: ["GET /healthz"]
admin:
  callers:
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read]}
`
	start := func(t *testing.T, text, adminAddr string) string {
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
		adm, err := net.Listen("tcp", adminAddr)
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
		return logs.String()
	}
	logs := start(t, exposed, ":0")
	for _, want := range []string{"admin listener is reachable beyond this host without TLS", "trusted_proxies trusts every peer", "store.max_keys (1000) is less than 128 times",
		`exempt route \"status.example.com/\" matches requests by the Host they name`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	if logs := start(t, quiet, "127.0.0.1:0"); strings.Contains(logs, "level=WARN") {
		t.Errorf("a loopback admin listener and named proxies warned:\n%s", logs)
	}
}
