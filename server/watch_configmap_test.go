package server_test

import (
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

// TestAConfigMapUpdateIsReloaded: the configuration file mounted as the
// kubelet mounts a ConfigMap (sluice.yaml is a link to ..data/sluice.yaml,
// ..data a link to a timestamped folder, and an update swaps ..data
// alone, leaving the sluice.yaml link as it was) is reloaded once the
// folder is swapped, with no SIGHUP.
func TestAConfigMapUpdateIsReloaded(t *testing.T) {
	mount := t.TempDir()
	version := func(name string, quantity string) {
		t.Helper()
		dir := filepath.Join(mount, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		text := "plans:\n  free: {limits: [{name: m, algorithm: gcra, quantity: " + quantity + ", window: 1m}]}\n"
		if err := os.WriteFile(filepath.Join(dir, "sluice.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		tmp := filepath.Join(mount, name+"_tmp")
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(mount, name)); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_12_01", "10")
	link("..2026_12_01", "..data")
	link("..data/sluice.yaml", "sluice.yaml")
	file := filepath.Join(mount, "sluice.yaml")

	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), WatchFile: file,
		Load: func() (*config.Config, error) { return config.Load(file) }})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	quantity := func() int64 { return srv.Config().Policy.Plans[0].Limits[0].Quantity() }
	if q := quantity(); q != 10 {
		t.Fatalf("quantity %d at start, want 10", q)
	}

	// What the server reads at start it reads again when it begins to
	// watch, after Serve starts: the swap must come after that, as an
	// update of the ConfigMap comes long after the pod started.
	time.Sleep(500 * time.Millisecond)
	version("..2026_12_02", "20")
	link("..2026_12_02", "..data") // the ConfigMap updated: the link swapped
	for deadline := time.Now().Add(10 * time.Second); quantity() != 20; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the ConfigMap's folder was swapped, quantity %d, want 20 (not reloaded)", quantity())
		}
	}
}
