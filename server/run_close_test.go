package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Run that cannot open its listeners returns the error and closes the
// Server, as Serve does on every error: what New started (here the
// refresh of identity.jwt's keys) does not run on.
func TestRunThatCannotListenClosesTheServer(t *testing.T) {
	p := newIDP(t, "u1")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	before := goleak.IgnoreCurrent()
	store := memory.New()
	defer store.Close()
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte("listen: "+busy.Addr().String()+"\n"+jwtConfig(p)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Run(context.Background()); err == nil {
		t.Fatal("Run on a busy port returned nil")
	}
	store.Close()
	if err := goleak.Find(before); err != nil {
		t.Errorf("after Run failed to listen, goroutines New started still run (the Server was not closed):\n%v", err)
	}
}
