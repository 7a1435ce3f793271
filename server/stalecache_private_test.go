package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// staleGetter pins levels on f and reads paths through its public listener,
// telling whether the upstream answered.
type staleGetter struct {
	f    *fixture
	hits *atomic.Int64
}

func (g staleGetter) pin(t *testing.T, level string) {
	t.Helper()
	resp := g.f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("pin %s: %d", level, resp.StatusCode)
	}
}

// get sends GET path with header, each name and value added as a line of
// its own, and returns the body and whether the upstream answered it.
func (g staleGetter) get(t *testing.T, path string, header ...string) (string, bool) {
	t.Helper()
	req, _ := http.NewRequest("GET", g.f.http.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	before := g.hits.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s %v: %d %s", path, header, resp.StatusCode, b)
	}
	return string(b), g.hits.Load() > before
}

func startStale(t *testing.T, cfg string, answer func(r *http.Request) string) staleGetter {
	hits := &atomic.Int64{}
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(answer(r)))
	})
	return staleGetter{f: newFixtureOn(t, cfg, up), hits: hits}
}

const staleByKeyConfig = `
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
default_plan: free
anonymous_plan: free
identity:
  api_key_headers: [X-Api-Key]
degradation:
  stale_for: 30s
  levels:
    elevated: {enter: {in_flight: 1000}, leave: {in_flight: 900}}
`

// A request's Authorization names its client to the upstream whether or not
// sluice's identity reads it (RFC 9111, 3.5): a copy of the answer to one
// never answers a request with other credentials, nor one without.
func TestStaleCopiesKeepAuthorizationApart(t *testing.T) {
	g := startStale(t, staleByKeyConfig, func(r *http.Request) string { return "for " + r.Header.Get("Authorization") })
	g.pin(t, "elevated")
	g.get(t, "/account", "Authorization", "Basic YWxpY2U6cw==")
	g.pin(t, "high")
	if body, fresh := g.get(t, "/account", "Authorization", "Basic YWxpY2U6cw=="); fresh {
		t.Errorf("alice's own copy was not served: %q", body)
	}
	for _, other := range [][]string{{"Authorization", "Basic Ym9iOnM="}, {}} {
		if body, fresh := g.get(t, "/account", other...); !fresh {
			t.Errorf("%v was served alice's copy: %q", other, body)
		}
	}
}

// A key header sent on several lines (cookies a client split, a tenant
// header repeated) is part of the key whole: two requests that differ only
// in a later line are two clients.
func TestStaleCopiesKeyEveryLineOfAHeader(t *testing.T) {
	g := startStale(t, staleByKeyConfig, func(r *http.Request) string {
		c, _ := r.Cookie("session")
		if c == nil {
			return "for nobody"
		}
		return "for " + c.Value
	})
	g.pin(t, "elevated")
	g.get(t, "/account", "Cookie", "theme=dark", "Cookie", "session=alice")
	g.pin(t, "high")
	if body, fresh := g.get(t, "/account", "Cookie", "theme=dark", "Cookie", "session=alice"); fresh {
		t.Errorf("alice's own copy was not served: %q", body)
	}
	if body, fresh := g.get(t, "/account", "Cookie", "theme=dark", "Cookie", "session=bob"); !fresh {
		t.Errorf("bob was served alice's copy: %q", body)
	}
}

const staleBehindProxyConfig = `
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
default_plan: free
anonymous_plan: free
identity:
  trusted_proxies: [127.0.0.1/32]
degradation:
  stale_for: 30s
  levels:
    elevated: {enter: {in_flight: 1000}, leave: {in_flight: 900}}
`

// Behind a trusted proxy the upstream is told the host and scheme the
// client used (X-Forwarded-Host, X-Forwarded-Proto, Forwarded's host and
// proto), and answers each its own links and redirects: a copy answers only
// the host and scheme it was recorded for. Anonymous clients, told apart by
// their addresses alone, still share copies.
func TestStaleCopiesKeepTheClientsHostAndScheme(t *testing.T) {
	g := startStale(t, staleBehindProxyConfig, func(r *http.Request) string {
		return r.Header.Get("X-Forwarded-Proto") + "://" + r.Header.Get("X-Forwarded-Host") + " " + r.Header.Get("Forwarded")
	})
	g.pin(t, "elevated")
	g.get(t, "/page", "X-Forwarded-Host", "a.example.com", "X-Forwarded-Proto", "https", "X-Forwarded-For", "192.0.2.1")
	g.get(t, "/page", "Forwarded", "for=192.0.2.1;host=a.example.com;proto=https")
	g.pin(t, "high")
	if body, fresh := g.get(t, "/page", "X-Forwarded-Host", "a.example.com", "X-Forwarded-Proto", "https", "X-Forwarded-For", "192.0.2.2"); fresh {
		t.Errorf("another anonymous client of the same host was not served the copy: %q", body)
	}
	if body, fresh := g.get(t, "/page", "Forwarded", `for="192.0.2.2";Host=a.example.com;proto=https`); fresh {
		t.Errorf("another anonymous client of the same host (Forwarded) was not served the copy: %q", body)
	}
	for _, other := range [][]string{
		{"X-Forwarded-Host", "b.example.com", "X-Forwarded-Proto", "https"},
		{"X-Forwarded-Host", "a.example.com", "X-Forwarded-Proto", "http"},
		{"Forwarded", "for=192.0.2.1;host=b.example.com;proto=https"},
		{"Forwarded", "for=192.0.2.1;host=a.example.com;proto=http"},
	} {
		if body, fresh := g.get(t, "/page", other...); !fresh {
			t.Errorf("%v was served the copy of another host or scheme: %q", other, body)
		}
	}
}

// HEAD is a read: at level 2 it is answered from the copy of the same GET,
// its header fields without its body, and spares the upstream as the GET
// does.
func TestStaleCopiesAnswerHEAD(t *testing.T) {
	g := startStale(t, staleByKeyConfig, func(r *http.Request) string { return "items" })
	g.pin(t, "elevated")
	g.get(t, "/items", "X-Api-Key", "alice")
	g.pin(t, "high")
	req, _ := http.NewRequest("HEAD", g.f.http.URL+"/items", nil)
	req.Header.Set("X-Api-Key", "alice")
	before := g.hits.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || g.hits.Load() != before || resp.Header.Get("Cache-Status") == "" {
		t.Errorf("HEAD at level 2: %d, upstream asked %v, Cache-Status %q", resp.StatusCode, g.hits.Load() != before, resp.Header.Get("Cache-Status"))
	}
	req.Header.Set("X-Api-Key", "bob")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if g.hits.Load() == before {
		t.Error("bob's HEAD was answered from alice's copy")
	}
}

// A GET that switches protocols (a WebSocket's handshake) is no answer to
// keep: at level 2 the next handshake reaches the upstream and switches,
// instead of a copy of a 200 with the switch's header fields and no body.
func TestStaleCacheKeepsNoProtocolSwitch(t *testing.T) {
	hits := &atomic.Int64{}
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		rw.Flush()
	})
	g := staleGetter{f: newFixtureOn(t, staleByKeyConfig, up), hits: hits}
	addr := strings.TrimPrefix(g.f.http.URL, "http://")
	handshake := func() int {
		t.Helper()
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n", addr)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	g.pin(t, "elevated")
	if code := handshake(); code != http.StatusSwitchingProtocols {
		t.Fatalf("handshake at level 1: %d", code)
	}
	time.Sleep(200 * time.Millisecond) // the tunnel closes; what it left is recorded
	g.pin(t, "high")
	if code := handshake(); code != http.StatusSwitchingProtocols || hits.Load() != 2 {
		t.Errorf("handshake at level 2: %d, upstream asked %d times, want 101 from the upstream", code, hits.Load())
	}
}

// A client that leaves before the upstream answers leaves nothing to keep:
// at level 2 the next client of the URL is not answered an empty 200.
func TestStaleCacheKeepsNothingOfAClientThatLeft(t *testing.T) {
	g := startStale(t, staleByKeyConfig, func(r *http.Request) string {
		if r.URL.Query().Get("wait") != "" {
			<-r.Context().Done()
		}
		return "page"
	})
	g.pin(t, "elevated")
	c := &http.Client{Timeout: 100 * time.Millisecond}
	if resp, err := c.Get(g.f.http.URL + "/page?wait=1"); err == nil {
		resp.Body.Close()
		t.Fatalf("the upstream answered %d, want the client to give up", resp.StatusCode)
	}
	time.Sleep(200 * time.Millisecond) // the proxy sees the client gone
	g.pin(t, "high")
	req, _ := http.NewRequest("GET", g.f.http.URL+"/page?wait=1", nil)
	ctx, cancel := context.WithTimeout(req.Context(), 100*time.Millisecond)
	defer cancel()
	before := g.hits.Load()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Errorf("at level 2: %d %q from a copy of nothing (upstream asked: %v)", resp.StatusCode, b, g.hits.Load() > before)
	}
}
