package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// A real HAProxy (Debian 12's 2.6) with a unix@ bind forwards its local
// clients to sluice's public listener with a PROXY header. It cannot name
// a Unix client: send-proxy sends "PROXY UNKNOWN", send-proxy-v2 a version
// 2 header of the LOCAL command (captured: the signature, 0x20 0x00
// 0x0000). Its client is one without an address, ip:unknown, not the
// balancer's own address: with the balancer in identity.trusted_proxies
// too, the X-Forwarded-For the local client writes itself is not believed,
// and its requests naming 203.0.113.9, .10 and .11 are one client on one
// quota. HAProxy is not skipped when missing: make deps installs it.
func TestAHAProxyUnixBindClientNamesNoAddress(t *testing.T) {
	p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]\nidentity:\n  trusted_proxies: [127.0.0.1/32]\n")
	dir := t.TempDir()
	v1sock, v2sock := filepath.Join(dir, "v1.sock"), filepath.Join(dir, "v2.sock")
	ready := realtest.FreeAddr(t)
	realtest.HAProxy(t, ready, fmt.Sprintf(`defaults
  mode tcp
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend ready
  bind %s
  default_backend sluice_v1
frontend v1
  bind unix@%s
  default_backend sluice_v1
frontend v2
  bind unix@%s
  default_backend sluice_v2
backend sluice_v1
  server sluice %s send-proxy
backend sluice_v2
  server sluice %s send-proxy-v2
`, ready, v1sock, v2sock, p.addrs.public, p.addrs.public))
	send := func(sock, xff string) string {
		t.Helper()
		conn, err := net.DialTimeout("unix", sock, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, "GET /v1/items HTTP/1.1\r\nHost: api\r\nX-Forwarded-For: "+xff+"\r\nConnection: close\r\n\r\n")
		line, _ := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line)
	}
	for _, c := range []struct{ version, sock, net string }{{"1 (PROXY UNKNOWN)", v1sock, "203.0.113."}, {"2 (LOCAL)", v2sock, "198.51.100."}} {
		var lines []string
		admitted := 0
		for _, host := range []string{"9", "10", "11"} {
			l := send(c.sock, c.net+host)
			lines = append(lines, l)
			if strings.HasPrefix(l, "HTTP/1.1 200") {
				admitted++
			}
		}
		if admitted > 1 {
			t.Errorf("a local client of HAProxy's unix@ bind, through PROXY v%s, naming %s9, .10, .11 in its own X-Forwarded-For: %q, %d admitted on a quota of 1 a minute (the API saw X-Forwarded-For %q); want at most 1: a client the header does not name has no address of its own choosing",
				c.version, c.net, lines, admitted, p.forwarded())
		}
	}
}

// A PROXY header that names no client with an IP address — version 1's
// UNKNOWN (with or without addresses, which a receiver ignores), version
// 2's LOCAL command (whose addresses a receiver ignores too) or UNSPEC
// family — makes a client without an address, ip:unknown, never the
// balancer's own address: with the balancer in identity.trusted_proxies,
// the X-Forwarded-For after it is not believed, and each such connection
// is the one client on one quota, whatever it names.
func TestAProxyHeaderNamingNoClientMakesAClientWithoutAnAddress(t *testing.T) {
	v2 := "\r\n\r\n\x00\r\nQUIT\n"
	for _, c := range []struct{ name, header string }{
		{"v1 UNKNOWN", "PROXY UNKNOWN\r\n"},
		{"v1 UNKNOWN with addresses", "PROXY UNKNOWN 198.51.100.1 192.0.2.1 1234 80\r\n"},
		{"v2 LOCAL", v2 + "\x20\x00\x00\x00"},
		{"v2 LOCAL with IPv4 addresses", v2 + "\x20\x11\x00\x0c" + "\xc6\x33\x64\x01" + "\xc0\x00\x02\x01" + "\x04\xd2\x00\x50"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]\nidentity:\n  trusted_proxies: [127.0.0.1/32]\n")
			var lines []string
			for _, xff := range []string{"203.0.113.9", "203.0.113.10", ""} {
				request := c.header + "GET /v1/items HTTP/1.1\r\nHost: api\r\n"
				if xff != "" {
					request += "X-Forwarded-For: " + xff + "\r\n"
				}
				lines = append(lines, sendFrom(t, "127.0.0.1", p.addrs.public, request+"Connection: close\r\n\r\n"))
			}
			if !strings.HasPrefix(lines[0], "HTTP/1.1 200") || !strings.HasPrefix(lines[1], "HTTP/1.1 429") || !strings.HasPrefix(lines[2], "HTTP/1.1 429") {
				t.Errorf("%s headers, with X-Forwarded-For 203.0.113.9, 203.0.113.10 and none: %q (the API saw X-Forwarded-For %q); want 200 then 429 twice: one client, ip:unknown, on a quota of one a minute",
					c.name, lines, p.forwarded())
			}
		})
	}
}
