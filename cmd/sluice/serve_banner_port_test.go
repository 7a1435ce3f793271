package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The demo's banner names the addresses it serves on: run on port 0 (any
// free port, as tests and a second demo beside the first run it), it names
// the ports the system chose, and its curl commands reach the demo.
func TestNewcomerBannerNamesTheBoundPorts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	addr := map[string]string{}
	for line := range lines {
		f := strings.Fields(line)
		if len(f) >= 3 && (f[0] == "public" || f[0] == "admin") && f[1] == "listener" {
			addr[f[0]] = strings.TrimSuffix(f[2], ":")
		}
		if len(addr) == 2 {
			break
		}
	}
	if len(addr) != 2 {
		t.Fatalf("the banner named no listeners: %v (exit %d)", addr, <-done)
	}
	for name, a := range addr {
		resp, err := http.Get("http://" + a + "/healthz")
		if err != nil {
			t.Errorf("%s listener as the banner names it, %s: %v", name, a, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s listener %s: /healthz answered %d", name, a, resp.StatusCode)
		}
	}
	cancel()
	go func() {
		for range lines {
		}
	}()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d after its context ended, want 0", code)
	}
}
