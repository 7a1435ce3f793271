package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestUntrustedClientCannotDescribeItsHop: from a peer that is not in
// identity.trusted_proxies, the upstream's forwarding headers describe
// sluice's hop alone, so no client chooses what the upstream believes of
// it. Besides X-Forwarded-For, -Proto and -Host, which sluice writes, that
// takes removing every other header of the client's that describes the
// hop: frameworks read them beside those, and often before them —
// X-Forwarded-Port and X-Forwarded-Prefix rebuild the request's URL
// (Spring's ForwardedHeaderFilter, Tomcat's RemoteIpValve, Express),
// X-Forwarded-Ssl: on and X-Forwarded-Scheme (read by Rack before
// X-Forwarded-Proto), Front-End-Https and X-Url-Scheme turn sluice's
// truthful "X-Forwarded-Proto: http" into https; X-Original-URL and
// X-Rewrite-URL (Symfony, IIS) route another path than the one sluice
// judged. So every X-Forwarded-*, Front-End-Https, X-Url-Scheme,
// X-Original-URL, X-Rewrite-URL and X-Original-Host is removed, in any
// spelling a CGI-style
// server reads as the same header (X_Forwarded_Ssl), as Traefik and Envoy
// remove an untrusted client's. A trusted proxy's pass on as it sent them,
// as its other headers do. Headers that describe no hop pass either way.
func TestUntrustedClientCannotDescribeItsHop(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	})
	sent := map[string]string{
		"X-Forwarded-Port":   "4443",
		"X-Forwarded-Prefix": "/evil",
		"X-Forwarded-Ssl":    "on",
		"X-Forwarded-Scheme": "https",
		"X-Forwarded-Server": "evil.example",
		"X-Forwarded-Uri":    "/admin",
		"X-Forwarded-Method": "DELETE",
		"Front-End-Https":    "on",
		"X-Url-Scheme":       "https",
		"X_Forwarded_Proto":  "https",
		"X-Original-Url":     "/admin", // Symfony, IIS: the path routed
		"X-Rewrite-Url":      "/admin",
		"X-Original-Host":    "evil.example",
		"X-Request-Id":       "r-1", // describes no hop
	}
	for _, c := range []struct {
		name, trusted string
		passes        bool // the hop headers reach the upstream
	}{
		{"from any other peer", "10.0.0.0/8", false}, // 127.0.0.1, the test's client, is not trusted
		{"from a trusted proxy", "127.0.0.1/32", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureOn(t, strings.Replace(testConfig, "127.0.0.1/32", c.trusted, 1), up)
			if r := f.do(t, "GET", "/api/search", "", sent); r.StatusCode != http.StatusOK {
				t.Fatalf("status %d", r.StatusCode)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := seen.Get("X-Forwarded-Proto"); got != "http" {
				t.Errorf("X-Forwarded-Proto %q, want http (sluice's own hop, and the peer sent none)", got)
			}
			for name, v := range sent {
				got := seen.Values(name)
				switch {
				case name == "X-Request-Id" || c.passes:
					if len(got) != 1 || got[0] != v {
						t.Errorf("upstream got %s: %q, want %q as sent", name, got, v)
					}
				case len(got) > 0:
					t.Errorf("upstream got the untrusted client's %s: %q beside sluice's X-Forwarded-Proto: http and X-Forwarded-Host", name, got)
				}
			}
		})
	}
}
