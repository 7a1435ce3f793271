package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// A token given where keys token takes a FILE (sluice keys token eyJ…) is
// a client's credential: keys refuses it without printing it back, and
// says how to pass one (a file, or "-" for standard input).
func TestKeysTokenNeverEchoesATokenGivenAsFile(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA"
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"keys", "-admin", "http://127.0.0.1:1", "token", jwt}, &out, &errOut)
	if said := out.String() + errOut.String(); code != 2 || strings.Contains(said, "c2lnbmF0dXJlLXNlY3JldA") || !strings.Contains(said, "sluice keys token -") {
		t.Errorf("exit %d, want 2, the token not printed and how to pass it; printed:\n%s", code, said)
	}
}

// A caller token given to -token-file in place of its file's name is
// refused without printing it back.
func TestKeysNeverEchoesATokenGivenAsTokenFile(t *testing.T) {
	const token = "sluice_3q2Xv9kR0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456"
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"keys", "-admin", "http://127.0.0.1:1", "-token-file", token, "top"}, &out, &errOut)
	if said := out.String() + errOut.String(); code != 2 || strings.Contains(said, "3q2Xv9kR0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456") || !strings.Contains(said, "-token-file") {
		t.Errorf("exit %d, want 2, the token not printed and -token-file named; printed:\n%s", code, said)
	}
}

// keys token - waits for the token on standard input; Ctrl-C while it
// waits ends it at once, as it ends every command, not only a second one.
func TestKeysTokenFromStandardInputEndsAtTheFirstInterrupt(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	stdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = stdin }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel) // Ctrl-C
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"keys", "-admin", "http://127.0.0.1:1", "token", "-"}, &out, &errOut)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errOut.String(), "interrupted") {
			t.Errorf("exit %d, want 1 and a line saying it was interrupted; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("keys token - still reads standard input 5 s after its context ended")
	}
}
