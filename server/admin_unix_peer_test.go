package server_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/server"
)

// An admin listener on a Unix-domain socket gives its peers no loopback
// scopes by the path they bound their end to: that path is the client's
// choice and may read as an address ("127.0.0.1:1"), which net/http puts
// in RemoteAddr. Every peer there is a caller without an address: without
// a token, /metrics (admin.loopback_scopes' read) is refused.
func TestAnAdminUnixPeerIsNoLoopbackCallerByTheAddressItBound(t *testing.T) {
	t.Chdir(t.TempDir()) // the client binds a relative path: it is made here
	srv, _ := loadServer(t, t.TempDir(), "upstream: http://127.0.0.1:1\n"+testConfig)
	adm, err := net.Listen("unix", "admin.sock")
	if err != nil {
		t.Fatalf("a Unix socket: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, server.Listeners{Public: listenLoopback(t), Admin: adm}) }()
	defer func() { cancel(); <-done }()
	for _, bound := range []string{"", "127.0.0.1:1", "[::1]:1"} {
		d := net.Dialer{}
		if bound != "" {
			d.LocalAddr = &net.UnixAddr{Net: "unix", Name: bound}
		}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", "admin.sock")
			}}}
		var resp *http.Response
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			if resp, err = client.Get("http://localhost/metrics"); err == nil || time.Since(start) > 5*time.Second {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /metrics without a token from a Unix peer bound to %q: %d, want 401 (no loopback scopes for a path the client chose)", bound, resp.StatusCode)
		}
	}
}
