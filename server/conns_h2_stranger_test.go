package server_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/sluice-dev/sluice/internal/testpki"
)

// h2Stranger opens a TLS connection to addr negotiating h2, sends
// the client preface and an empty SETTINGS frame — no request, no stream —
// and waits for the server's SETTINGS acknowledgement, which the server
// sends only after it has read the preface (so the connection was accepted,
// and any connection closed to make room for it was closed).
func h2Stranger(t *testing.T, addr string, ca *testpki.CA) net.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("stranger's h2 connection: %v", err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok {
			if sf.IsAck() {
				break
			}
			fr.WriteSettingsAck()
		}
	}
	c.SetDeadline(time.Time{})
	return c
}

// At connections.max, a stranger's connection — one no request was made on
// yet — is closed before a caller's keep-alive (docs/decisions.md,
// "Connections are bounded per listener"), whatever protocol it speaks: an
// HTTP/2 stranger that sends only the connection preface, which Go's server
// reports active and idle again with no request, is still a stranger
// (TestAdminCallersKeepTheirConnectionWhileStrangersComeAndGo: HTTP/1.1).
func TestAnH2StrangerDoesNotOutrankACallersKeepAlive(t *testing.T) {
	ca := testpki.New(t, "admin CA")
	ca.Server(t, "admin")
	srv, _ := loadServer(t, t.TempDir(), testConfig+strings.Replace(testAdmin, "admin:\n",
		"admin:\n  loopback_scopes: []\n  tls: {cert_file: "+ca.File("admin")+", key_file: "+ca.KeyFile("admin")+"}\n", 1)+
		"connections: {max: 2}\n")
	l := serveOn(t, srv)

	// The caller: one HTTP/1.1 keep-alive connection with its token.
	caller, err := tls.Dial("tcp", l.admin, &tls.Config{RootCAs: ca.Pool, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { caller.Close() })
	br := bufio.NewReader(caller)
	call := func(when string) error {
		caller.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(caller, "GET /v1/degradation HTTP/1.1\r\nHost: %s\r\nSluice-Token: %s\r\n\r\n", l.admin, testToken)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return fmt.Errorf("call %s on the caller's keep-alive connection: %w", when, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("call %s: %d", when, resp.StatusCode)
		}
		return nil
	}
	if err := call("first"); err != nil {
		t.Fatal(err)
	}

	// Two strangers arrive; neither makes a request. The second finds the
	// listener full (the caller's connection and the first stranger's).
	h2Stranger(t, l.admin, ca)
	h2Stranger(t, l.admin, ca)

	if err := call("after two strangers"); err != nil {
		t.Errorf("%v: the caller's keep-alive connection was closed to make room for an HTTP/2 stranger that made no request; want the first stranger's closed instead", err)
	}
}
