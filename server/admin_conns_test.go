package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// At connections.max, the admin listener makes room by closing strangers'
// connections — ones no request was made on yet, oldest first — before a
// caller's keep-alive connection between its requests; and a stranger's
// refused request (401) closes its connection, so a stranger holds no
// keep-alive there at all.
func TestAdminCallersKeepTheirConnectionWhileStrangersComeAndGo(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "sluice.yaml")
	os.WriteFile(cfgFile, []byte(testConfig+strings.Replace(testAdmin, "admin:\n", "admin:\n  loopback_scopes: []\n", 1)+"connections: {max: 2}\n"), 0o644)
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	l := serveOn(t, srv)

	var dials atomic.Int64
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}}
	t.Cleanup(client.CloseIdleConnections)
	call := func(when string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+l.admin+"/v1/degradation", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("call %s: %v", when, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusConflict {
			t.Fatalf("call %s: %d", when, resp.StatusCode)
		}
	}
	call("first")
	var strangers []net.Conn
	for i := range 3 {
		s, err := net.Dial("tcp", l.admin)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		strangers = append(strangers, s)
		time.Sleep(100 * time.Millisecond) // accepted, closing one to make room if full
		call(fmt.Sprintf("after stranger %d", i+1))
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the caller dialed %d times, want 1: its connection was closed for a stranger's", n)
	}
	for i, s := range strangers[:2] {
		s.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, s); err != nil {
			t.Errorf("stranger %d's connection: %v, want it closed for the next", i+1, err)
		}
	}

	// A stranger's request is refused, and its connection closed after.
	s := strangers[2]
	s.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(s, "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", l.admin)
	br := bufio.NewReader(s)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("a stranger's request: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a stranger's request: %d, want 401", resp.StatusCode)
	}
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("after the 401: %q, %v; want the connection closed", rest, err)
	}
	if !resp.Close {
		t.Error("the 401 does not say Connection: close")
	}
}
