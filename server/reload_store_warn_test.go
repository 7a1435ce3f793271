package server_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// On a memory store, a reload that changes only a limit's lease: (a
// setting of Redis's) changes nothing of the store, and says nothing of a
// store change at the next start; a change of max_keys says it.
func TestReloadOnMemoryStoreWarnsOnlyOfItsOwnSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	write := func(store, lease string) {
		t.Helper()
		text := "upstream: http://127.0.0.1:9\n" + store + "plans:\n  anonymous:\n    limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m" + lease + "}]\nanonymous_plan: anonymous\n"
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("", "")
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
	write("", ", lease: off")
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "store section changes") {
		t.Errorf("a lease: on a memory store logged a store change:\n%s", logs.String())
	}
	write("store: {type: memory, max_keys: 1000}\n", ", lease: off")
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "store section changes") {
		t.Errorf("a change of max_keys logged no store change:\n%s", logs.String())
	}
}
