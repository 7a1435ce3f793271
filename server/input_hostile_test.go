package server_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/server"
)

// serveReal serves f's server with Serve on loopback listeners (the
// production http.Servers: header limits, timeouts) and returns their
// addresses.
func serveReal(t *testing.T, f *fixture) listening {
	t.Helper()
	return serveOn(t, f.srv)
}

// rawStatus sends raw bytes as a request and returns the response status,
// or 0 if the server closed the connection without one.
func rawStatus(t *testing.T, addr, raw string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go c.Write([]byte(raw)) // a server may answer before reading it all
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Hostile requests on the wire — oversized headers and keys, bytes that are
// not UTF-8, control characters, broken framing — are answered with a 4xx
// (or decided as any request is), never a 5xx, and the server keeps serving.
func TestHostileRequestsAreNever5xx(t *testing.T) {
	f := newFixture(t, testConfig)
	addr := serveReal(t, f)
	get := func(target string, headers ...string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + strings.Join(headers, "") + "Connection: close\r\n\r\n"
	}
	hdr := func(name, value string) string { return name + ": " + value + "\r\n" }
	many := ""
	for i := range 2000 {
		many += hdr("X-H"+strings.Repeat("a", i%7)+string(rune('a'+i%26)), strings.Repeat("v", 40))
	}
	cases := []struct {
		name string
		raw  string
		want int // 0: any status below 500
	}{
		{"a 100 KB header", get("/api/a", hdr("X-Big", strings.Repeat("x", 100<<10))), 431},
		{"2000 headers", get("/api/a", many), 431},
		{"a 100 KB URI", get("/api/" + strings.Repeat("a", 100<<10)), 431},
		{"a 2 KB API key is not believed", get("/api/a", hdr("Authorization", "Bearer "+strings.Repeat("k", 2048))), 200},
		{"a 60 KB API key is not believed", get("/api/a", hdr("X-API-Key", strings.Repeat("k", 60<<10))), 0},
		{"an API key that is not UTF-8", get("/api/a", hdr("X-API-Key", "\xff\xfe\xfd-key")), 0},
		{"a Bearer of spaces", get("/api/a", hdr("Authorization", "Bearer      ")), 0},
		{"a NUL in a header", get("/api/a", hdr("X-API-Key", "a\x00b")), 400},
		{"a header name with a space", get("/api/a", hdr("X API Key", "a")), 400},
		{"a path that is not UTF-8", get("/api/\xff\xfe"), 0},
		{"a broken escape", get("/api/%zz"), 400},
		{"an absolute URI elsewhere", get("http://evil.example/api/a"), 0},
		{"10,000 forwarding hops", get("/api/a", hdr("X-Forwarded-For", strings.Repeat("1.2.3.4, ", 5000)+"5.6.7.8")), 0},
		{"a forwarded header of garbage", get("/api/a", hdr("Forwarded", `for="[::1;proto=\"`), hdr("X-Forwarded-For", "\xff, ,,unknown")), 0},
		{"a negative Content-Length", "POST /api/a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
		{"two Content-Lengths", "POST /api/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"a bad chunk", "POST /api/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 0},
		{"HTTP/9", "GET /api/a HTTP/9.0\r\nHost: x\r\n\r\n", 505},
		{"forward-auth with a URI that is not one", get("/v1/forward-auth", hdr("X-Forwarded-Uri", "\xff not a uri")), 400},
		{"forward-auth with a 60 KB URI", get("/v1/forward-auth", hdr("X-Forwarded-Uri", "/"+strings.Repeat("a", 60<<10))), 0},
		{"forward-auth with an odd method", get("/v1/forward-auth", hdr("X-Forwarded-Method", "\xff\xfe"), hdr("X-Original-URI", "//")), 0},
		{"forward-auth with a host of garbage", get("/v1/forward-auth", hdr("X-Forwarded-Host", "\xff:99999:[")), 0},
		{"a decision API GET", get("/v1/check"), 405},
		{"a degradation level of garbage", "PUT /v1/degradation HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\nConnection: close\r\n\r\n{\"level\":", 400},
		{"a designer run of garbage", "POST /designer/run HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\nConnection: close\r\n\r\n{\"limit\":{\"quantity\":1e999}}  ", 400},
	}
	// Sluice's private paths go to the admin listener with the caller's
	// token, every other one to the public listener.
	target := func(raw string) (string, string) {
		line, _, _ := strings.Cut(raw, "\r\n")
		for _, p := range adminPaths {
			if strings.Contains(line, " "+p) {
				return addr.admin, strings.Replace(raw, "Host: x\r\n", "Host: x\r\n"+server.TokenHeader+": "+testToken+"\r\n", 1)
			}
		}
		return addr.public, raw
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			to, raw := target(c.raw)
			got := rawStatus(t, to, raw)
			switch {
			case c.want != 0 && got != c.want:
				t.Errorf("status %d, want %d", got, c.want)
			case c.want == 0 && (got == 0 || got >= 500):
				t.Errorf("status %d, want a decision or a 4xx", got)
			}
		})
	}
	if got := rawStatus(t, addr.public, get("/api/health")); got != 200 {
		t.Fatalf("after the hostile requests: %d", got)
	}
}

// Hostile bodies for the decision API — invalid costs, wrong types, deep
// nesting, giant documents, bytes that are not UTF-8 — get a 4xx problem
// (or, where the body is merely odd, a decision): never a 5xx.
func TestDecisionAPIHostileBodies(t *testing.T) {
	f := newFixture(t, testConfig)
	deep := strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000)
	cases := []struct {
		name, body string
		want       int
	}{
		{"cost as a fraction", `{"user":"u","cost":1.5}`, 400},
		{"cost as a string", `{"user":"u","cost":"3"}`, 400},
		{"cost beyond int64", `{"user":"u","cost":9223372036854775808}`, 400},
		{"cost of 1e400", `{"user":"u","cost":1e400}`, 400},
		{"cost as true", `{"user":"u","cost":true}`, 400},
		{"cost as an object", `{"user":"u","cost":{}}`, 400},
		{"cost as null is the endpoint's", `{"user":"u","cost":null}`, 200},
		{"cost above every limit", `{"user":"u","cost":1000000}`, 200},
		{"a user of nesting", `{"user":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, 400},
		{"nesting under an unknown field", deep[:60000], 400},
		{"a 60 KB array", `{"user":"u","x":[` + strings.Repeat("1,", 30000) + `1]}`, 400},
		{"a 10 MB body", `{"user":"` + strings.Repeat("x", 10<<20) + `"}`, 413},
		{"a 60 KB subject", `{"subject":"` + strings.Repeat("s", 60000) + `"}`, 400},
		{"a user that is not UTF-8", "{\"user\":\"\xff\xfe\"}", 400},
		{"an API key that is not UTF-8", "{\"api_key\":\"\xc3\x28\"}", 400},
		{"a NUL in the user", `{"user":"a\u0000b"}`, 200},
		{"a hash tag in the subject", `{"subject":"{x}:per-minute"}`, 200},
		{"duplicate fields", `{"user":"a","user":"b"}`, 200},
		{"an array", `[{"user":"u"}]`, 400},
		{"a string", `"user"`, 400},
		{"a number", `1`, 400},
		{"an IP with a zone", `{"ip":"fe80::1%eth0"}`, 400},
		{"an IP that is a prefix", `{"ip":"10.0.0.0/8"}`, 400},
		{"a method of 1000 bytes", `{"user":"u","method":"` + strings.Repeat("G", 1000) + `"}`, 400},
		{"a path of 3000 bytes", `{"user":"u","path":"/` + strings.Repeat("p", 3000) + `"}`, 400},
		{"a path with NUL", `{"user":"u","path":"/a\u0000b"}`, 0},
		{"a plan that is not UTF-8", "{\"user\":\"u\",\"plan\":\"\xff\"}", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(t, "POST", "/v1/check", c.body, map[string]string{"Content-Type": "application/json"})
			body := readAll(t, r)
			switch {
			case r.StatusCode >= 500:
				t.Fatalf("status %d: %.300s", r.StatusCode, body)
			case c.want != 0 && r.StatusCode != c.want:
				t.Errorf("status %d, want %d: %.300s", r.StatusCode, c.want, body)
			case r.StatusCode >= 400 && r.Header.Get("Content-Type") != "application/problem+json":
				t.Errorf("a %d without a problem body: %q", r.StatusCode, r.Header.Get("Content-Type"))
			}
		})
	}
}

const spoofConfig = `
identity:
  trusted_proxies: [10.0.0.0/8]
  user_header: X-User-ID
  plan_header: X-Plan
plans:
  anonymous:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
  pro:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
anonymous_plan: anonymous
default_plan: anonymous
`

// A client that is not a trusted proxy cannot choose who it is: whatever
// forwarding, user and plan headers it sends, it is limited by its own
// address on the anonymous plan. Behind a trusted proxy, a client that
// writes its own X-Forwarded-For hop is still known by the hop the proxy
// added.
func TestSpoofedForwardingHeadersAreIgnored(t *testing.T) {
	f := newFixture(t, spoofConfig)
	h := f.srv.PublicHandler()
	send := func(remote string, headers map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/api/search", nil)
		r.RemoteAddr = remote
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	spoofs := []map[string]string{
		{"X-Forwarded-For": "203.0.113.1"},
		{"Forwarded": "for=203.0.113.2", "X-Real-IP": "203.0.113.3"},
		{"X-User-ID": "admin", "X-Plan": "pro"},
		{"X-Forwarded-For": "10.0.0.1, 127.0.0.1", "X-Plan": "pro", "True-Client-IP": "203.0.113.4"},
	}
	for i, hs := range spoofs {
		w := send("198.51.100.7:4321", hs)
		want := 200
		if i == 3 {
			want = 429
		}
		if w.Code != want || !strings.Contains(w.Header().Get("RateLimit-Policy"), `"per-minute";q=3;`) {
			t.Fatalf("untrusted peer, request %d with %v: %d %q, want %d on the anonymous plan",
				i, hs, w.Code, w.Header().Get("RateLimit-Policy"), want)
		}
	}
	// Through a trusted proxy (10.0.0.9) that appends the address it saw:
	// the client's own hops to the left change nothing.
	for i, xff := range []string{"198.51.100.8", "1.1.1.1, 198.51.100.8", "10.0.0.7, 198.51.100.8", "unknown, 198.51.100.8"} {
		w := send("10.0.0.9:4321", map[string]string{"X-Forwarded-For": xff})
		want := 200
		if i == 3 {
			want = 429
		}
		if w.Code != want {
			t.Fatalf("via the trusted proxy, request %d (X-Forwarded-For %q): %d, want %d", i, xff, w.Code, want)
		}
	}
}

// Changing the degradation level needs a caller with the admin scope on the
// admin listener. Neither a stranger, nor a caller with other scopes, nor a
// loopback peer (whom the default grants only read) may pin it, whatever
// forwarding headers say.
func TestDegradationPinNeedsTheAdminScope(t *testing.T) {
	f := newFixture(t, spoofConfig+`
degradation:
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
admin:
  callers:
    - {name: ops, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [admin]}
    - {name: grafana, token_sha256: 5a4806aaf8e14a7c4a89f70d1ef7b2324ddae2b85c417a9270d87b4db806b6a0, scopes: [read, check]}
`)
	h := f.srv.AdminHandler()
	put := func(remote string, headers map[string]string, level string) int {
		r := httptest.NewRequest("PUT", "/v1/degradation", strings.NewReader(`{"level":"`+level+`"}`))
		r.RemoteAddr = remote
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		name    string
		remote  string
		headers map[string]string
		want    int
	}{
		{"a stranger", "198.51.100.7:1", nil, 401},
		{"a stranger naming loopback", "198.51.100.7:1", map[string]string{"X-Forwarded-For": "127.0.0.1"}, 401},
		{"a trusted proxy of the data plane", "10.0.0.9:1", nil, 401},
		{"loopback without a token", "127.0.0.1:1", nil, 401},
		{"loopback with a made-up token", "127.0.0.1:1", map[string]string{"Authorization": "Bearer guess"}, 401},
		{"a caller without the admin scope", "198.51.100.7:1", map[string]string{"Authorization": "Bearer grafana-token"}, 403},
		{"the operator's token, from anywhere", "198.51.100.7:1", map[string]string{"Authorization": "Bearer " + testToken}, 200},
		{"the operator's token in Sluice-Token", "10.0.0.9:1", map[string]string{server.TokenHeader: testToken}, 200},
	} {
		if got := put(c.remote, c.headers, "critical"); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		if got := f.srv.Degradation().Level; (got != 0) != (c.want == 200) {
			t.Errorf("%s: level %v after a %d", c.name, got, c.want)
		}
		put("127.0.0.1:1", map[string]string{server.TokenHeader: testToken}, "normal")
	}
}

// A relay on sluice's own host that adds no forwarding headers (nginx's
// proxy_pass by default) cannot pin the degradation level: in front of the
// public listener the path is the upstream's, and in front of the admin
// listener loopback holds only the read scope.
func TestSameHostRelayCannotPinTheLevel(t *testing.T) {
	f := newFixture(t, testConfig+"\nadmin:\n  loopback_scopes: [read]\n")
	addrs := serveOn(t, f.srv)
	for name, to := range map[string]string{"public": addrs.public, "admin": addrs.admin} {
		target, _ := url.Parse("http://" + to)
		relay := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }})
		req, _ := http.NewRequest("PUT", relay.URL+"/v1/degradation", strings.NewReader(`{"level":"critical"}`))
		resp, err := relay.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		relay.Close()
		if got := f.srv.Degradation().Level; got != 0 {
			t.Fatalf("through a relay to the %s listener (answered %d) the level became %v", name, resp.StatusCode, got)
		}
		if name == "admin" && resp.StatusCode != 401 {
			t.Errorf("through a relay to the admin listener: %d, want 401", resp.StatusCode)
		}
	}
}
