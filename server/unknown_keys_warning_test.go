package server_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A configuration whose identity.unknown_keys is key, which makes every
// made-up API key a client of its own, is logged at Warn when the server
// starts on it and when a reload brings it in; a reload that keeps it, or
// a configuration without it, logs nothing of it.
func TestUnknownKeysKeyIsWarnedOfAtLoad(t *testing.T) {
	const plain = `
plans:
  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}]}
`
	keyed := "identity: {unknown_keys: key}\n" + plain
	file := t.TempDir() + "/sluice.yaml"
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	warnings := func(logs *realtest.Buffer) int {
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, "identity.unknown_keys is key") {
				n++
			}
		}
		return n
	}
	start := func(text string) (*server.Server, *realtest.Buffer, func()) {
		t.Helper()
		write(text)
		cfg, err := config.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		logs := new(realtest.Buffer)
		store := memory.New()
		srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store,
			Load:   func() (*config.Config, error) { return config.Load(file) },
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- srv.Serve(ctx, server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)})
		}()
		for begun := time.Now(); !strings.Contains(logs.String(), "sluice serving") && time.Since(begun) < 10*time.Second; {
			time.Sleep(5 * time.Millisecond)
		}
		return srv, logs, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
			srv.Close()
			store.Close()
		}
	}

	srv, logs, stop := start(keyed)
	if n := warnings(logs); n != 1 {
		t.Errorf("started with unknown_keys: key: %d warnings, want 1:\n%s", n, logs)
	}
	stop()
	if !strings.Contains(logs.String(), "made-up API key is a client of its own") {
		t.Errorf("the warning does not say what it means:\n%s", logs)
	}

	srv, logs, stop = start(plain)
	defer stop()
	if n := warnings(logs); n != 0 {
		t.Errorf("started without unknown_keys: %d warnings, want 0:\n%s", n, logs)
	}
	for i, step := range []struct {
		text string
		want int
	}{
		{keyed, 1}, // brought in
		{keyed, 1}, // kept
		{plain, 1}, // taken out
		{keyed, 2}, // brought in again
	} {
		write(step.text)
		if err := srv.Reload(); err != nil {
			t.Fatalf("reload %d: %v", i+1, err)
		}
		if n := warnings(logs); n != step.want {
			t.Errorf("after reload %d: %d warnings, want %d:\n%s", i+1, n, step.want, logs)
		}
	}
}
