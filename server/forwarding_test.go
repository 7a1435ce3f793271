package server_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestUpstreamSeesTheClientThroughTrustedProxies: behind a load balancer or
// CDN listed in identity.trusted_proxies, the upstream gets the forwarding
// chain that proxy reported with sluice's peer appended, and the scheme and
// host the client used — not sluice's own plain-HTTP hop, which would make
// the upstream write http:// links and see every client as the balancer.
// From any other peer the same headers are sluice's alone: a client cannot
// choose what the upstream believes of it. X-Real-IP is the client sluice
// identified, whatever the request said.
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
		"X-Real-Ip":         "192.0.2.66",
		"True-Client-Ip":    "192.0.2.77",
		"Cf-Connecting-Ip":  "192.0.2.78",
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
			"X-Real-Ip":         "203.0.113.9", // the rightmost untrusted hop: the client sluice limits
			"True-Client-Ip":    "192.0.2.77",
			"Cf-Connecting-Ip":  "192.0.2.78",
		}},
		{"from any other peer", "10.0.0.0/8", map[string]string{
			"X-Forwarded-For":   "127.0.0.1",
			"X-Forwarded-Proto": "http",
			"X-Forwarded-Host":  "sluice's own",
			"Forwarded":         "",
			"X-Real-Ip":         "127.0.0.1",
			"True-Client-Ip":    "",
			"Cf-Connecting-Ip":  "",
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

// TestReloadClosesTheOldUpstreamConnections: each configuration has a
// transport of its own; a reload closes the idle connections of the one it
// replaces, so frequent reloads (a keys file synced every minute) do not
// pile up idle connections at the upstream.
func TestReloadClosesTheOldUpstreamConnections(t *testing.T) {
	var open atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	up.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	up.Start()
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	pub := httptest.NewServer(srv.PublicHandler())
	t.Cleanup(pub.Close)
	for i := range 5 {
		resp, err := http.Get(pub.URL + "/api/x")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err := srv.Reload(); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := open.Load(); n > 0 {
		t.Errorf("%d connections to the upstream open after 5 requests, each followed by a reload", n)
	}
}

// TestPreserveHost: with preserve_host the upstream gets the Host the client
// asked for; without, the upstream URL's. X-Forwarded-Host names the
// client's either way.
func TestPreserveHost(t *testing.T) {
	var mu sync.Mutex
	var host, forwarded string
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		host, forwarded = r.Host, r.Header.Get("X-Forwarded-Host")
		mu.Unlock()
	})
	for _, preserve := range []bool{true, false} {
		f := newFixtureOn(t, fmt.Sprintf("preserve_host: %v\n", preserve)+testConfig, upstream)
		req, _ := http.NewRequest("GET", f.http.URL+"/api/x", nil)
		req.Host = "api.example.com"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mu.Lock()
		want := "api.example.com"
		if !preserve {
			want = upstreamHostOf(t, f)
		}
		if host != want || forwarded != "api.example.com" {
			t.Errorf("preserve_host %v: upstream saw Host %q and X-Forwarded-Host %q, want %q and api.example.com", preserve, host, forwarded, want)
		}
		mu.Unlock()
	}
}

// upstreamHostOf returns the host:port of f's upstream, from its
// configuration.
func upstreamHostOf(t *testing.T, f *fixture) string {
	t.Helper()
	u, err := url.Parse(f.srv.Config().Upstream)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
