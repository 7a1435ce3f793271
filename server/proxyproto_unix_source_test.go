package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/pires/go-proxyproto"
)

// The source of a PROXY v2 header of the AF_UNIX family (HAProxy's for a
// client of a unix@ bind) is the path the client bound its socket to: a
// path the local client picks, which names no address even when it reads
// as one. Clients whose paths read as 198.51.100.7:1, 198.51.100.8:1 and
// 127.0.0.1:1 (a trusted proxy's, with an X-Forwarded-For) are the one
// client without an address, ip:unknown, on one quota.
func TestAUnixFamilyProxyHeadersSourcePathNamesNoAddress(t *testing.T) {
	header := func(src string) string {
		h := &proxyproto.Header{Version: 2, Command: proxyproto.PROXY, TransportProtocol: proxyproto.UnixStream,
			SourceAddr:      &net.UnixAddr{Net: "unix", Name: src},
			DestinationAddr: &net.UnixAddr{Net: "unix", Name: "/run/haproxy.sock"}}
		b, err := h.Format()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]\nidentity:\n  trusted_proxies: [127.0.0.1/32]\n")
	var lines []string
	for _, c := range []struct{ src, xff string }{
		{"198.51.100.7:1", ""},
		{"198.51.100.8:1", ""},
		{"127.0.0.1:1", "203.0.113.9"},
	} {
		request := header(c.src) + "GET /v1/items HTTP/1.1\r\nHost: api\r\n"
		if c.xff != "" {
			request += "X-Forwarded-For: " + c.xff + "\r\n"
		}
		lines = append(lines, sendFrom(t, "127.0.0.1", p.addrs.public, request+"Connection: close\r\n\r\n"))
	}
	if !strings.HasPrefix(lines[0], "HTTP/1.1 200") || !strings.HasPrefix(lines[1], "HTTP/1.1 429") || !strings.HasPrefix(lines[2], "HTTP/1.1 429") {
		t.Errorf("AF_UNIX PROXY headers from 198.51.100.7:1, 198.51.100.8:1 and 127.0.0.1:1 (X-Forwarded-For 203.0.113.9): %q (the API saw X-Forwarded-For %q); want 200 then 429 twice: one client, ip:unknown, on a quota of one a minute",
			lines, p.forwarded())
	}
}
