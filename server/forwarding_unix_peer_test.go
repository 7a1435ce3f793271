package server_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestATrustedUnixPeersForwardingReachesTheUpstream: with
// identity.trusted_proxies: ["unix:"], a reverse proxy on the same host
// that reaches sluice's public handler over a Unix socket is a trusted
// proxy, and the upstream gets the chain, scheme and host it reported, as
// from any trusted peer (a peer without an address adds no hop). They were
// dropped: an https client reached the upstream as X-Forwarded-Proto: http
// with no X-Forwarded-For.
func TestATrustedUnixPeersForwardingReachesTheUpstream(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	})
	f := newFixtureOn(t, strings.Replace(testConfig, "[127.0.0.1/32]", `["unix:"]`, 1), upstream)

	dir, err := os.MkdirTemp("", "s50u")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "p.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: f.srv.PublicHandler()}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	req, _ := http.NewRequest("GET", "http://api.example.com/api/search", nil)
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", "api.example.com")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := seen.Get("X-Real-Ip"); got != "203.0.113.9" {
		t.Errorf("X-Real-Ip %q, want 203.0.113.9 (the client sluice limited)", got)
	}
	if got := strings.Join(seen.Values("X-Forwarded-For"), ", "); !strings.Contains(got, "203.0.113.9") {
		t.Errorf("X-Forwarded-For %q: the chain the trusted Unix peer reported (203.0.113.9) is lost", got)
	}
	if got := seen.Get("X-Forwarded-Proto"); got != "https" {
		t.Errorf("X-Forwarded-Proto %q, want https as the trusted Unix peer reported it", got)
	}
}
