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

// A client may not ask the upstream, through the public listener, to
// switch its connection to HTTP/2 (Upgrade: h2c): the limiter would see the
// one request that asked, and none of the streams the tunnel then carries.
// sluice ignores the offer, as a server may (RFC 9110 §7.8), and the
// request is answered in HTTP/1.1 like any other; other upgrades
// (WebSockets) still pass.
func TestPublicListenerDoesNotTunnelAnH2CUpgrade(t *testing.T) {
	var upgrades atomic.Int64
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			w.Write([]byte("upstream:" + r.URL.Path))
			return
		}
		// A lenient upstream: it switches to whatever it is offered, and
		// does not look for HTTP2-Settings among Connection's tokens.
		upgrades.Add(1)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + r.Header.Get("Upgrade") + "\r\n\r\n")
		rw.Flush()
	})
	f := newFixtureOn(t, testConfig, upstream)
	addr := strings.TrimPrefix(f.http.URL, "http://")
	for _, c := range []struct{ name, connection, upgrade string }{
		{"h2c, HTTP2-Settings named in Connection", "Upgrade, HTTP2-Settings", "h2c"},
		{"h2c, HTTP2-Settings not named", "Upgrade", "h2c"},
		{"h2c in another case, among other offers", "upgrade", "foo/1, H2C"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := upgrades.Load()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(conn, "GET /api/x HTTP/1.1\r\nHost: %s\r\nConnection: %s\r\nUpgrade: %s\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
				addr, c.connection, c.upgrade)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			if resp.StatusCode != http.StatusOK || string(body) != "upstream:/api/x" {
				t.Errorf("status %d %q, want the upstream's 200 in HTTP/1.1", resp.StatusCode, body)
			}
			if n := upgrades.Load() - before; n != 0 {
				t.Errorf("the upstream was offered an upgrade %d times, want 0", n)
			}
		})
	}
}
