package server_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

const staleConfig = `
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
default_plan: free
anonymous_plan: free
identity:
  trusted_proxies: [127.0.0.1/32]
rules:
  - name: tenants
    key: ["header:X-Tenant"]
    fallback: skip
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
response:
  headers: [ietf, legacy]
  cors: {origins: [https://app.example.com]}
degradation:
  stale_for: 30s
  levels:
    elevated: {enter: {in_flight: 1000}, leave: {in_flight: 900}}
`

// At level 2 (high) the stale cache answers reads with what level 1
// recorded: only to the client (credentials, tenant header, cookies,
// origin) and URL it was recorded for, and the values of the headers its
// response varies by; never a response that set a cookie, was private,
// must be revalidated or varies by anything (Vary: *); without the recorded response's RateLimit
// fields; only for stale_for.
func TestStaleCopiesAreTheirClientsOnly(t *testing.T) {
	var hits atomic.Int64
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/cookie":
			w.Header().Set("Set-Cookie", "s=1")
		case "/private":
			w.Header().Set("Cache-Control", "private, max-age=60")
		case "/revalidate":
			w.Header().Set("Cache-Control", "max-age=60, Must-Revalidate")
		case "/no-cache":
			w.Header().Set("Cache-Control", `no-cache="Set-Cookie"`)
		case "/encoded":
			w.Header().Set("Vary", "Accept-Language, Accept-Encoding")
		case "/star":
			w.Header().Set("Vary", "*")
		case "/cors":
			w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		}
		w.Write([]byte("for " + r.Header.Get("X-Api-Key") + r.Header.Get("X-Tenant")))
	})
	f := newFixtureOn(t, staleConfig, up)
	pin := func(level string) {
		resp := f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("pin %s: %d", level, resp.StatusCode)
		}
	}
	get := func(path string, header ...string) (body string, h http.Header, fromUpstream bool) {
		t.Helper()
		req, _ := http.NewRequest("GET", f.http.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		before := hits.Load()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s %v: %d %s", path, header, resp.StatusCode, b)
		}
		return string(b), resp.Header, hits.Load() > before
	}

	pin("elevated") // records
	get("/items", "X-Api-Key", "alice")
	get("/items", "X-Api-Key", "alice", "X-Tenant", "acme")
	get("/cookie", "X-Api-Key", "alice")
	get("/private", "X-Api-Key", "alice")
	get("/encoded", "X-Api-Key", "alice", "Accept-Encoding", "br, gzip")
	get("/star", "X-Api-Key", "alice")
	get("/revalidate", "X-Api-Key", "alice")
	get("/no-cache", "X-Api-Key", "alice")
	app := "https://app.example.com"
	get("/items", "X-Api-Key", "alice", "Origin", app)
	get("/cors", "X-Api-Key", "alice", "Origin", app)
	pin("high") // serves copies
	body, h, fresh := get("/items", "X-Api-Key", "alice")
	if fresh || body != "for alice" || h.Get("Cache-Status") == "" {
		t.Errorf("alice's copy: %q, from the upstream %v, Cache-Status %q", body, fresh, h.Get("Cache-Status"))
	}
	for _, name := range []string{"RateLimit", "RateLimit-Policy", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if h.Get(name) != "" {
			t.Errorf("a stale copy repeats the recorded %s: %q", name, h.Get(name))
		}
	}
	if body, _, fresh := get("/items", "X-Api-Key", "alice", "X-Tenant", "acme"); fresh || body != "for aliceacme" {
		t.Errorf("alice's copy for tenant acme: %q, from the upstream %v", body, fresh)
	}
	// A copy keeps the upstream's CORS decision: what it kept from the
	// origin stays kept; what it let the origin read, it still may.
	if _, h, fresh := get("/items", "X-Api-Key", "alice", "Origin", app); fresh || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a copy the upstream kept from the origin: from the upstream %v, Access-Control-Allow-Origin %q", fresh, h.Get("Access-Control-Allow-Origin"))
	}
	if _, h, fresh := get("/cors", "X-Api-Key", "alice", "Origin", app); fresh || h.Get("Access-Control-Allow-Origin") != app ||
		len(h.Values("Access-Control-Expose-Headers")) != 1 {
		t.Errorf("a copy the upstream let the origin read: from the upstream %v, %q", fresh, h)
	}
	for _, other := range [][]string{
		{"X-Api-Key", "bob"},
		{},
		{"X-Api-Key", "alice", "X-Tenant", "globex"},
		{"X-Api-Key", "alice", "Cookie", "s=2"},
		{"X-Api-Key", "alice", "Origin", "https://other.example.com"},
	} {
		if body, _, fresh := get("/items", other...); !fresh {
			t.Errorf("%v was served another client's copy: %q", other, body)
		}
	}
	if _, _, fresh := get("/encoded", "X-Api-Key", "alice", "Accept-Encoding", "br, gzip"); fresh {
		t.Error("the copy of an answer that varies was not served to the same request")
	}
	if _, _, fresh := get("/encoded", "X-Api-Key", "alice", "Accept-Encoding", "identity"); !fresh {
		t.Error("an answer for Accept-Encoding: br, gzip was served to Accept-Encoding: identity")
	}
	for _, path := range []string{"/cookie", "/private", "/star", "/revalidate", "/no-cache"} {
		if _, _, fresh := get(path, "X-Api-Key", "alice"); !fresh {
			t.Errorf("%s was kept", path)
		}
	}
	f.clock.Advance(31 * time.Second)
	if _, _, fresh := get("/items", "X-Api-Key", "alice"); !fresh {
		t.Error("a copy older than stale_for was served")
	}
}
