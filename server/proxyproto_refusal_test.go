package server_test

import (
	"bufio"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// sendFrom writes request on a new connection to addr from the loopback
// address ip and returns the first line of the answer, trimmed.
func sendFrom(t *testing.T, ip, addr, request string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, request)
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line)
}

// Whether the public listener reads PROXY headers is fixed when it starts,
// as its TLS is (docs/decisions.md; the reload warns that the PROXY
// protocol on/off changes at the next start). A reload that takes
// proxy_protocol out (the operator turning it off, to apply at the restart
// when the balancer stops sending headers too) leaves the running
// listener reading the headers of the peers it listed last: the
// balancer, which still sends them, is not refused every request.
func TestReloadTurningProxyProtocolOffKeepsTheRunningListenerReadingHeaders(t *testing.T) {
	p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]")
	const request = "PROXY TCP4 203.0.113.7 127.0.0.1 4000 80\r\nGET /v1/items HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n"
	if line := sendFrom(t, "127.0.0.1", p.addrs.public, request); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("the balancer's request before the reload: %q, want 200", line)
	}
	text, err := os.ReadFile(p.file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.file, []byte(strings.Replace(string(text), "proxy_protocol: [127.0.0.1/32]\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	// 429: the header was read, and the client it names, 203.0.113.7, has
	// used its request of the minute.
	if line := sendFrom(t, "127.0.0.1", p.addrs.public, request); !strings.HasPrefix(line, "HTTP/1.1 429") {
		t.Errorf("the balancer's request (with its PROXY header) after a reload that turns the PROXY protocol off, which applies at the next start: %q, want its header read (429 for 203.0.113.7, already served)", line)
	}
}

// A listed peer's connection that starts with a malformed PROXY header is
// refused before a request is read, and the peer is told so: http.Server's
// 400 (the SluiceProxyHeaderMissing runbook: "each was refused (400)"),
// not a connection closed with no answer.
func TestMalformedProxyHeaderIsAnswered400(t *testing.T) {
	p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]")
	line := sendFrom(t, "127.0.0.1", p.addrs.public, "PROXY TCP4 not-an-address 127.0.0.1 4000 80\r\nGET /v1/items HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n")
	if !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("a listed peer's malformed PROXY header: first line %q, want the documented 400", line)
	}
}
