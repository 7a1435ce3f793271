package server_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// TestReloadsChannelReloads: a value on Options.Reloads reloads the
// configuration while the server serves, without a file watch and
// without any signal (the binary turns SIGHUP into one).
func TestReloadsChannelReloads(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	write := func(docs string) {
		t.Helper()
		text := "upstream: http://127.0.0.1:9\ndocs_path: " + docs + "\nplans:\n  anonymous:\n    limits: [{name: per-minute, algorithm: gcra, quantity: 3, window: 1m}]\nanonymous_plan: anonymous\n"
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("/docs-a")
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	reloads := make(chan struct{}, 1)
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Reloads: reloads,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	docs := func() string { return srv.Config().DocsPath }
	write("/docs-b")
	time.Sleep(100 * time.Millisecond)
	if d := docs(); d != "/docs-a" {
		t.Fatalf("reloaded without being asked: docs_path %s", d)
	}
	reloads <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for docs() != "/docs-b" {
		if ctx.Err() != nil {
			t.Fatalf("no reload 5s after a value on Reloads: docs_path %s", docs())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
