package boundedfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestReadNeverWaitsForAPipeSwappedIn: a path that turns from a regular
// file into a pipe while it is read is refused or read, never waited on.
func TestReadNeverWaitsForAPipeSwappedIn(t *testing.T) {
	dir := t.TempDir()
	regular, fifo, path := filepath.Join(dir, "regular"), filepath.Join(dir, "fifo"), filepath.Join(dir, "path")
	if err := os.WriteFile(regular, []byte("pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(regular, path); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() { // point path at the file and the pipe in turn, each swap atomic
		defer close(swapped)
		tmp := filepath.Join(dir, "tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := regular
			if i%2 == 1 {
				target = fifo
			}
			os.Remove(tmp)
			if os.Symlink(target, tmp) != nil || os.Rename(tmp, path) != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-swapped }()
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			Read(path, 16)
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			// Free the reader: opening the pipe for writing ends its wait.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			<-done
			t.Fatal("Read waited on a pipe for a writer")
		}
	}
}
