package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// TestReadinessFollowsTheRunningStoresPolicy: /readyz, while the store is
// not reachable, answers by the on_store_error of the running store — the
// one it was opened with, which a reload does not change (the store
// section changes at the next start) — not by the configuration in force:
// a reload from local to deny leaves every pod ready while the store still
// decides locally (an unready fleet would make the store's outage the
// API's), and one from deny to local leaves them unready while the store
// still refuses every request.
func TestReadinessFollowsTheRunningStoresPolicy(t *testing.T) {
	for _, c := range []struct {
		start, reloaded string
		want            int // /readyz while the store is down, by the running store's policy
	}{
		{"local", "deny", http.StatusOK},
		{"deny", "local", http.StatusServiceUnavailable},
	} {
		t.Run(c.start+"_to_"+c.reloaded, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "sluice.yaml")
			write := func(policy string) {
				t.Helper()
				text := "store: {type: redis, redis: {addresses: [\"127.0.0.1:1\"], on_store_error: " + policy + "}}\n" +
					"plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
				if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(c.start)
			cfg, err := config.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			store := memory.New()
			t.Cleanup(func() { store.Close() })
			reloads := make(chan struct{}, 1)
			srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Reloads: reloads,
				Ready:  func(context.Context) error { return errors.Join(errors.New("redis down"), sluice.ErrStoreUnavailable) },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Load: func() (*config.Config, error) { return config.Load(file) }})
			if err != nil {
				t.Fatal(err)
			}
			addrs := serveOn(t, srv)
			ready := func() int {
				t.Helper()
				resp, err := http.Get("http://" + addrs.admin + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := ready(); got != c.want {
				t.Fatalf("at start under %s: /readyz %d, want %d", c.start, got, c.want)
			}
			write(c.reloaded)
			reloads <- struct{}{}
			if !within(10*time.Second, func() bool { return srv.Config().Store.Redis.OnStoreError == c.reloaded }) {
				t.Fatal("not reloaded")
			}
			if got := ready(); got != c.want {
				t.Errorf("after a reload to on_store_error %s (the running store still decides by %s until the next start): /readyz %d, want %d",
					c.reloaded, c.start, got, c.want)
			}
		})
	}
}

// TestRestartOnlyChangesAreWarnedAgainstTheRunningSettings: a reload warns
// that the store section changes at the next start whenever the reloaded
// store settings differ from those the process started with, at every
// such reload, and not when they are back to them.
func TestRestartOnlyChangesAreWarnedAgainstTheRunningSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	write := func(maxKeys, docs string) {
		t.Helper()
		text := "store: {type: memory, max_keys: " + maxKeys + "}\ndocs_path: " + docs + "\n" +
			"plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: 10, window: 1m}]}\n"
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1000", "/docs")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	var logs realtest.Buffer
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		maxKeys, docs string
		warned        int // store warnings logged so far
	}{
		{"2000", "/docs", 1},         // changed from the running store: warned
		{"2000", "/docs-other", 2},   // still changed: warned again
		{"1000", "/docs-other", 2},   // back to the running store: nothing to warn of
		{"1000", "/docs-other-2", 2}, // unchanged
	} {
		write(step.maxKeys, step.docs)
		if err := srv.Reload(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(logs.String(), "store section changes"); got != step.warned {
			t.Fatalf("after a reload to max_keys %s (started with 1000): %d store warnings, want %d:\n%s", step.maxKeys, got, step.warned, logs.String())
		}
	}
}
