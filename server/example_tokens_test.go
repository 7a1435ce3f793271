package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// publishedTokensConfig has the callers deploy/sluice.yaml and
// deploy/kubernetes/configmap.yaml ship: their token_sha256 are those of
// sluice_example-prometheus-token-replace-me and
// sluice_example-ingress-nginx-token-replace-me, printed in the repository;
// ops holds a token of its own.
const publishedTokensConfig = `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]}
admin:
  loopback_scopes: []
  callers:
    - {name: prometheus, token_sha256: f6eb2e287519cef01c47744bf1c3c61040d45f806bc1486059c53fbc59d147f4, scopes: [read]}
    - {name: ingress-nginx, token_sha256: c02480cd6f0f21470174f255f307eff357904c937a7ec92ceace22a1fce8b672, scopes: [check]}
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [admin]}
`

// A caller whose token is an example token the repository publishes is
// accepted (the demo and the examples use them on loopback) but warned of
// by name, at the start and at every reload: anyone who has read the
// repository holds its scopes. A caller with a token of its own is not.
func TestCallersHoldingAPublishedExampleTokenAreWarnedOf(t *testing.T) {
	cfg, err := config.Parse("sluice.yaml", []byte(publishedTokensConfig))
	if err != nil {
		t.Fatal(err)
	}
	var logs realtest.Buffer
	store := memory.New()
	defer store.Close()
	load := func() (*config.Config, error) { return config.Parse("sluice.yaml", []byte(publishedTokensConfig)) }
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Load: load, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}) }()
	for start := time.Now(); !strings.Contains(logs.String(), "sluice serving") && time.Since(start) < 5*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	started := logs.Len()
	if err := srv.Reload(); err != nil {
		t.Errorf("reload: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	out := logs.String()
	warned := func(logs, name string) bool {
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, `\"`+name+`\"`) && strings.Contains(line, "example token") {
				return true
			}
		}
		return false
	}
	for _, name := range []string{"prometheus", "ingress-nginx"} {
		if !warned(out[:started], name) {
			t.Errorf("the start says nothing of caller %s, which holds a published example token:\n%s", name, out[:started])
		}
		if !warned(out[started:], name) {
			t.Errorf("the reload says nothing of caller %s, which holds a published example token:\n%s", name, out[started:])
		}
	}
	if warned(out, "ops") {
		t.Errorf("caller ops, whose token is its own, was warned of:\n%s", out)
	}
}
