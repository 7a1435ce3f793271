package server_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A watched file (here the listener's key) replaced by a pipe neither
// blocks the watcher nor stops reloads: the reload it asks for is refused,
// and once the file is back the next one applies.
func TestWatcherSurvivesAWatchedFileReplacedByAPipe(t *testing.T) {
	ca := testpki.New(t, "watch CA")
	ca.Server(t, "public")
	dir := t.TempDir()
	key := filepath.Join(dir, "tls.key")
	keyPEM, err := os.ReadFile(ca.KeyFile("public"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sluice.yaml")
	write := func(docs string) {
		t.Helper()
		text := "upstream: http://127.0.0.1:9\ndocs_path: " + docs + "\ntls: {cert_file: " + ca.File("public") + ", key_file: " + key + "}\n" +
			"plans:\n  anonymous:\n    limits: [{name: m, algorithm: gcra, quantity: 3, window: 1m}]\nanonymous_plan: anonymous\n"
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
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Reloads: reloads, WatchFile: file,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)

	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Lets a reader blocked opening the pipe go (it reads nothing).
		if f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if err := os.Rename(pipe, key); err != nil {
		t.Fatal(err)
	}
	reloads <- struct{}{}
	time.Sleep(300 * time.Millisecond)
	if err := os.Rename(key, pipe); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	write("/docs-b")
	select {
	case reloads <- struct{}{}:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher takes no reload request: it is blocked")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for srv.Config().DocsPath != "/docs-b" {
		if ctx.Err() != nil {
			t.Fatalf("no reload 5 s after the key is back: docs_path %s", srv.Config().DocsPath)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
