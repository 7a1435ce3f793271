package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// TestKeysCommand: sluice keys top, inspect and reset against a running
// server's admin listener, with a caller token holding the admin scope.
func TestKeysCommand(t *testing.T) {
	cfg, err := config.Parse("k.yaml", []byte(`
admin:
  callers:
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [admin]} # test-token
plans:
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(admin.Close)
	api := httptest.NewServer(srv.PublicHandler())
	t.Cleanup(api.Close)
	for range 3 {
		resp, err := http.Get(api.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	keys := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := runKeys(context.Background(), append([]string{"-admin", admin.URL, "-token", "test-token"}, args...), &out, &errOut)
		return out.String(), err
	}
	out, err := keys("top")
	if err != nil || !strings.Contains(out, "ip:127.0.0.1  ip:") || !strings.Contains(out, "free  1") {
		t.Errorf("top: %v\n%s", err, out)
	}
	out, err = keys("inspect", "ip:127.0.0.1")
	if err != nil || !strings.Contains(out, "per-minute  fixed-window  2         1m      2     0  ") {
		t.Errorf("inspect: %v\n%s", err, out)
	}
	out, err = keys("reset", "ip:127.0.0.1")
	if err != nil || out != "reset ip:127.0.0.1: [per-minute] (1 states forgotten)\n" {
		t.Errorf("reset: %v %q", err, out)
	}
	if out, _ = keys("inspect", "ip:127.0.0.1"); !strings.Contains(out, "  0     2          0s") {
		t.Errorf("inspect after the reset:\n%s", out)
	}
	if err = runKeys(context.Background(), []string{"-admin", admin.URL, "-token", "", "top"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without a token: %v, want a 401", err)
	}
}
