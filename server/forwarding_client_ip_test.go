package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestAnUntrustedClientIPHeaderIsRemoved: from a peer outside
// identity.trusted_proxies every header that names the client by its
// address is removed before the upstream, Client-IP, X-Forwarded and Forwarded-For among
// them (PHP's HTTP_CLIENT_IP, which the usual PHP client-address function reads before
// X-Forwarded-For; Rails' RemoteIp reads it too): an untrusted client's
// Client-IP: 6.6.6.6 reached the upstream beside sluice's X-Real-IP.
func TestAnUntrustedClientIPHeaderIsRemoved(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	})
	// 127.0.0.1, the test's client, is not a trusted proxy.
	f := newFixtureOn(t, strings.Replace(testConfig, "127.0.0.1/32", "10.0.0.0/8", 1), up)
	sent := map[string]string{"Client-Ip": "6.6.6.6", "X-Client-Ip": "6.6.6.7", "X-Forwarded": "for=6.6.6.8", "Forwarded-For": "6.6.6.9"}
	if r := f.do(t, "GET", "/api/search", "", sent); r.StatusCode != http.StatusOK {
		t.Fatalf("status %d", r.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := seen.Values("X-Client-Ip"); len(got) > 0 {
		t.Fatalf("X-Client-Ip reached the upstream: %q (the control: it is removed)", got)
	}
	for _, name := range []string{"Client-Ip", "X-Forwarded", "Forwarded-For"} {
		if got := seen.Values(name); len(got) > 0 {
			t.Errorf("upstream got the untrusted client's %s: %q beside X-Real-Ip %q", name, got, seen.Get("X-Real-Ip"))
		}
	}
}
