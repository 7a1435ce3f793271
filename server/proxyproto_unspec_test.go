package server_test

import (
	"strings"
	"testing"
)

// A v2 header of the PROXY command and the UNSPEC family is malformed to
// go-proxyproto (the specification lets a receiver refuse it): a listed
// balancer's connection that starts with one is refused before a request
// is read, 400, as a headerless one is (docs/operations.md, "Behind an L4
// load balancer", and the SluiceProxyHeaderMissing runbook say so). LOCAL
// is the command of a connection without a client.
func TestAProxyCommandUnspecHeaderIsRefused(t *testing.T) {
	v2 := "\r\n\r\n\x00\r\nQUIT\n"
	for _, c := range []struct{ name, header string }{
		{"v2 PROXY UNSPEC", v2 + "\x21\x00\x00\x00"},
		{"v2 PROXY UNSPEC with a TLV", v2 + "\x21\x00\x00\x07" + "\xea\x00\x04abcd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]\nidentity:\n  trusted_proxies: [127.0.0.1/32]\n")
			line := sendFrom(t, "127.0.0.1", p.addrs.public,
				c.header+"GET /v1/items HTTP/1.1\r\nHost: api\r\nX-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n")
			if !strings.HasPrefix(line, "HTTP/1.1 400") {
				t.Errorf("%s header from a listed balancer: %q, want the connection refused with a 400", c.name, line)
			}
		})
	}
}
