package server_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestUpstreamSeesTheClientThroughTrustedProxies: behind a load balancer or
// CDN listed in identity.trusted_proxies, the upstream gets the forwarding
// chain that proxy reported with sluice's peer appended, and the scheme and
// host the client used — not sluice's own plain-HTTP hop, which would make
// the upstream write http:// links and see every client as the balancer.
// From any other peer the same headers are sluice's alone: a client cannot
// choose what the upstream believes of it.
func TestUpstreamSeesTheClientThroughTrustedProxies(t *testing.T) {
	var mu sync.Mutex
	var seen http.Header
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
	})
	sent := map[string]string{
		"X-Forwarded-For":   "198.51.100.1, 203.0.113.9",
		"X-Forwarded-Proto": "https",
		"X-Forwarded-Host":  "api.example.com",
		"Forwarded":         `for=198.51.100.1;proto=https, for="[2001:db8::9]"`,
	}
	cases := []struct {
		name, trusted string
		want          map[string]string
	}{
		{"from a trusted proxy", "127.0.0.1/32", map[string]string{
			"X-Forwarded-For":   "198.51.100.1, 203.0.113.9, 127.0.0.1",
			"X-Forwarded-Proto": "https",
			"X-Forwarded-Host":  "api.example.com",
			"Forwarded":         `for=198.51.100.1;proto=https, for="[2001:db8::9]", for=127.0.0.1`,
		}},
		{"from any other peer", "10.0.0.0/8", map[string]string{
			"X-Forwarded-For":   "127.0.0.1",
			"X-Forwarded-Proto": "http",
			"X-Forwarded-Host":  "sluice's own",
			"Forwarded":         "",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixtureOn(t, strings.Replace(testConfig, "127.0.0.1/32", c.trusted, 1), upstream)
			if r := f.do(t, "GET", "/api/search", "", sent); r.StatusCode != http.StatusOK {
				t.Fatalf("status %d", r.StatusCode)
			}
			mu.Lock()
			defer mu.Unlock()
			for name, want := range c.want {
				if want == "sluice's own" {
					want = strings.TrimPrefix(f.http.URL, "http://")
				}
				if got := strings.Join(seen.Values(name), ", "); got != want {
					t.Errorf("%s: upstream saw %q, want %q", name, got, want)
				}
			}
		})
	}
}
