package boundedfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(small, 5); err != nil || string(b) != "12345" {
		t.Errorf("a file of the bound: %q, %v", b, err)
	}
	if _, err := Read(small, 4); err == nil || !strings.Contains(err.Error(), "holds more than 4 bytes") {
		t.Errorf("a file above the bound: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(fifo, 5); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("a pipe: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 5); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
}
