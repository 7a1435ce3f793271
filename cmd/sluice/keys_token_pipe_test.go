package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pipeName returns the /dev/fd name of the read end of a pipe holding
// text, its write end closed: what a shell passes for <(printf …).
func pipeName(t *testing.T, text string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		w.WriteString(text) // fails once the reader has read its bound and gone
		w.Close()
	}()
	return fmt.Sprintf("/dev/fd/%d", r.Fd())
}

// recordingAdmin is an admin listener that records the Authorization and
// the body of each request and answers what keys command asked for.
func recordingAdmin(t *testing.T) (*httptest.Server, *[]string) {
	var seen []string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Header.Get("Authorization")+" "+string(body))
		if r.URL.Path == "/v1/tokens" {
			w.Write([]byte(`{"verified":false,"result":"malformed","detail":"not a token"}`))
			return
		}
		w.Write([]byte("[]"))
	}))
	t.Cleanup(admin.Close)
	return admin, &seen
}

// -token-file and keys token's FILE are read from a pipe as from a file:
// -token-file <(pass show sluice/admin), which the shell names /dev/fd/N,
// hands the token over without writing it to disk. It is read as a file
// is (one trailing newline left out). The server's own secret files,
// re-read on each reload, stay regular files only (config.ReadSecret).
func TestKeysReadsATokenFromAPipe(t *testing.T) {
	admin, seen := recordingAdmin(t)
	args := []string{"-admin", admin.URL, "-token-file", pipeName(t, "sluice_from-a-pipe\n"), "top"}
	if err := runKeys(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatalf("keys -token-file <pipe> top: %v", err)
	}
	args = []string{"-admin", admin.URL, "-token-file", pipeName(t, "sluice_from-a-pipe\n"), "token", pipeName(t, "eyJhbGciOiJub25lIn0.e30.\n")}
	if err := runKeys(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatalf("keys -token-file <pipe> token <pipe>: %v", err)
	}
	want := []string{"Bearer sluice_from-a-pipe ", `Bearer sluice_from-a-pipe {"token":"eyJhbGciOiJub25lIn0.e30."}`}
	if fmt.Sprint(*seen) != fmt.Sprint(want) {
		t.Errorf("the admin listener got %q, want %q", *seen, want)
	}
}

// A named pipe (mkfifo) is read as well, once its writer comes.
func TestKeysReadsATokenFromANamedPipe(t *testing.T) {
	admin, seen := recordingAdmin(t)
	fifo := filepath.Join(t.TempDir(), "token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString("sluice_from-a-fifo\n")
			f.Close()
		}
	}()
	if err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token-file", fifo, "top"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("keys -token-file <fifo> top: %v", err)
	}
	if len(*seen) != 1 || (*seen)[0] != "Bearer sluice_from-a-fifo " {
		t.Errorf("the admin listener got %q, want the fifo's token", *seen)
	}
}

// A pipe is held to a secret file's bound, 64 KiB, and read no further
// (what holds more is no token); an empty one is refused as an empty file
// is. Neither sends anything.
func TestKeysRefusesAPipeOfNoToken(t *testing.T) {
	admin, seen := recordingAdmin(t)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"more than 64 KiB", strings.Repeat("x", 64<<10+1), "more than 65536 bytes"},
		{"nothing", "", "is empty"},
		{"a newline", "\n", "is empty"},
	} {
		err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token-file", pipeName(t, tc.text), "top"}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a pipe holding %s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	// A pipe bigger than the pipe's buffer is read up to the bound, not to
	// its end.
	err := runKeys(context.Background(), []string{"-admin", admin.URL, "-token-file", pipeName(t, strings.Repeat("x", 1<<20)), "top"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "more than 65536 bytes") {
		t.Errorf("a pipe holding 1 MiB: %v, want it refused at 64 KiB", err)
	}
	if len(*seen) != 0 {
		t.Errorf("the admin listener got %q, want nothing", *seen)
	}
}

// A named pipe nobody writes to would wait for ever: Ctrl-C ends the wait
// at once, as it ends every command.
func TestKeysTokenFromAPipeEndsAtTheFirstInterrupt(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	defer func() { // a writer lets the abandoned read end
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel) // Ctrl-C
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"keys", "-admin", "http://127.0.0.1:1", "-token-file", fifo, "top"}, &out, &errOut)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errOut.String(), "interrupted") {
			t.Errorf("exit %d, want 1 and a line saying it was interrupted; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting for the pipe 5 s after the interrupt")
	}
}
