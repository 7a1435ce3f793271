package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sendRaw sends head, a request's line and fields without the blank line
// ending them, on a connection of its own to addr, and returns the
// answer's status.
func sendRaw(t *testing.T, addr, head string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(conn, head+"\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// A rule's except entry that names a header leaves a request out "only as
// every router reads it" (docs/rules.md, Except): the request is left out
// because the upstream routes it elsewhere by that header. A header the
// client names in its Connection field the reverse proxy removes (RFC 9110
// §7.6.1, httputil.ReverseProxy) before the upstream sees it, so the
// limits judge the request without it: every request the upstream serves
// without the header is the rule's, at most its quantity of them.
func TestAHeaderNamedInConnectionLeavesNoRequestOut(t *testing.T) {
	const cfg = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
rules:
  - name: api
    match: {paths: ["/api/"]}
    except:
      - {headers: [{name: X-Beta, value: "1"}]}   # the gateway routes these to the beta service
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}
`
	var ordinary, beta atomic.Int64 // requests the upstream served without X-Beta (the rule's route), and with it
	f := newFixtureOn(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Beta") == "1" {
			beta.Add(1)
		} else {
			ordinary.Add(1)
		}
	}))
	addr := strings.TrimPrefix(f.http.URL, "http://")
	var statuses []int
	for _, connection := range []string{"close, X-Beta", "x-beta", "keep-alive", "close,  X-BETA ,", "Keep-Alive"} {
		// Each Connection line is read, and each name in any case.
		statuses = append(statuses, sendRaw(t, addr, fmt.Sprintf("GET /api/orders HTTP/1.1\r\nHost: %s\r\nX-Beta: 1\r\nConnection: close\r\nConnection: %s\r\n", addr, connection)))
	}
	if n := ordinary.Load(); n > 2 {
		t.Errorf("the upstream served %d requests without X-Beta (statuses %v), which the rule api (2 a minute) left out as X-Beta requests; want at most 2", n, statuses)
	}
	// Not named, X-Beta reaches the upstream, and the request is left out.
	if got := sendRaw(t, addr, fmt.Sprintf("GET /api/orders HTTP/1.1\r\nHost: %s\r\nX-Beta: 1\r\nConnection: close\r\n", addr)); got != http.StatusOK || beta.Load() != 3 {
		t.Errorf("X-Beta not named in Connection: %d, the upstream got %d with X-Beta; want 200, 3 (two Keep-Alive ones and this)", got, beta.Load())
	}
}

// A rule matching a hop-by-hop header, which the reverse proxy does not
// forward (Keep-Alive, TE, Trailer, Proxy-Connection, Proxy-Authorization,
// Upgrade), judges it absent, as the upstream gets the request; the proxy
// keeps "TE: trailers" and the Upgrade of a request switching protocols,
// and so do the limits.
func TestAHopByHopHeaderIsJudgedAsTheUpstreamGetsIt(t *testing.T) {
	cases := []struct {
		path, header, fields string
		matched              bool // the rule, 1 a minute, matches: its second request is refused
	}{
		{"/keep-alive", "{name: Keep-Alive}", "Connection: keep-alive\r\nKeep-Alive: timeout=5", false},
		{"/proxy-connection", "{name: Proxy-Connection}", "Proxy-Connection: keep-alive", false},
		{"/proxy-authorization", "{name: Proxy-Authorization}", "Proxy-Authorization: Basic YTpi", false},
		{"/trailer", "{name: Trailer}", "Trailer: X-Checksum", false},
		{"/te", "{name: TE, value: gzip}", "TE: gzip", false},
		{"/trailers", "{name: TE, value: trailers}", "TE: trailers, gzip", true}, // forwarded as "TE: trailers"
		{"/ws", "{name: Upgrade, value: websocket}", "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", true},
		{"/ws-unasked", "{name: Upgrade, value: websocket}", "Upgrade: websocket", false}, // no Connection: Upgrade, not forwarded
	}
	cfg := `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
rules:
`
	for _, c := range cases {
		cfg += fmt.Sprintf("  - {name: %q, match: {paths: [%q], headers: [%s]}, limits: [{name: m, algorithm: fixed-window, quantity: 1, window: 1m}]}\n",
			strings.TrimPrefix(c.path, "/"), c.path, c.header)
	}
	f := newFixtureOn(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Upgrade", r.Header.Get("Upgrade"))
			w.WriteHeader(http.StatusSwitchingProtocols)
		}
	}))
	addr := strings.TrimPrefix(f.http.URL, "http://")
	for _, c := range cases {
		want := []int{http.StatusOK, http.StatusOK}
		if c.path == "/ws" {
			want[0] = http.StatusSwitchingProtocols
		}
		if c.matched {
			want[1] = http.StatusTooManyRequests
		}
		for i := range want {
			got := sendRaw(t, addr, fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", c.path, addr, c.fields))
			if got != want[i] {
				t.Errorf("%s with %q, request %d: %d, want %d", c.path, c.fields, i+1, got, want[i])
			}
		}
	}
}
