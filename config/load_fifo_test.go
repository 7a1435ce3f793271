package config_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
)

// A configuration path naming a pipe is refused at once: opening it would
// wait for a writer, and a reload would hang with it.
func TestLoadRefusesAPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := config.Load(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a pipe: %v; want an error saying it is not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load of a pipe is still waiting after 5s")
	}
}
