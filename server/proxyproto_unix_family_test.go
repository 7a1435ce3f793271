package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/pires/go-proxyproto"
)

// A connection accepted on the public TCP listener stays one accepted on
// TCP, whatever family its PROXY header names: the header names the
// client (RemoteAddr) alone, the listener's socket is still the
// connection's LocalAddr. A v2 header of the AF_UNIX family (HAProxy's
// for a client of a unix@ bind) names a client without an IP address, so
// its requests are the one client ip:unknown; with trusted_proxies
// ["unix:"], which trusts the peers of connections accepted on a
// Unix-domain socket, its X-Forwarded-For is still not believed.
func TestAUnixFamilyProxyHeaderMakesNoUnixSocketPeer(t *testing.T) {
	h := &proxyproto.Header{Version: 2, Command: proxyproto.PROXY, TransportProtocol: proxyproto.UnixStream,
		SourceAddr:      &net.UnixAddr{Net: "unix", Name: "/run/client.sock"},
		DestinationAddr: &net.UnixAddr{Net: "unix", Name: "/run/haproxy.sock"}}
	header, err := h.Format()
	if err != nil {
		t.Fatal(err)
	}
	send := func(p *proxyServer) []string {
		var lines []string
		for _, xff := range []string{"203.0.113.1", "203.0.113.2"} {
			request := string(header) + "GET /v1/items HTTP/1.1\r\nHost: api\r\nX-Forwarded-For: " + xff + "\r\nConnection: close\r\n\r\n"
			lines = append(lines, sendFrom(t, "127.0.0.1", p.addrs.public, request))
		}
		return lines
	}
	for _, c := range []struct{ name, cfg string }{
		{"no proxy trusted", "proxy_protocol: [127.0.0.1/32]\n"},
		{"unix: trusted", "proxy_protocol: [127.0.0.1/32]\nidentity:\n  trusted_proxies: [\"unix:\"]\n"},
	} {
		p := newProxyServer(t, c.cfg)
		if lines := send(p); !strings.HasPrefix(lines[0], "HTTP/1.1 200") || !strings.HasPrefix(lines[1], "HTTP/1.1 429") {
			t.Errorf("%s: two requests through a listed balancer's AF_UNIX PROXY header, naming themselves 203.0.113.1 "+
				"and 203.0.113.2 in X-Forwarded-For: %q (the API saw %q), want 200 then 429 (one client, ip:unknown)",
				c.name, lines, p.forwarded())
		}
	}
}
