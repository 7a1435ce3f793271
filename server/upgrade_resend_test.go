package server_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// A proxy must not retry a non-idempotent request (RFC 9110 §9.2.2). An
// upgrade request to an https upstream that fails unanswered over HTTP/1.1
// is sent again only on evidence from its own connection that the
// upstream did not act on it; that the upstream negotiates h2 on another
// connection says nothing of this one. Most https upstreams speak both
// HTTP/1.1 and h2 (nginx with http2 on, Envoy, Caddy, Go), and a Go server
// listing h2 alone by ALPN serves HTTP/1.1 to a client offering http/1.1
// (crypto/tls's fallback, Go issue 46310). Such an upstream that acts on a
// DELETE, then loses the connection unanswered (its handler panics after
// acting, which Go's server turns into a closed connection), gets it once,
// and its failure is a 502: the upstream's, counted, where the connection
// confirmed http/1.1, and not counted where it negotiated nothing (a
// gRPC service closes such a connection without a byte too).
func TestANonIdempotentUpgradeIsSentOnceWhateverAnotherConnectionSpeaks(t *testing.T) {
	for _, tc := range []struct {
		name, upgrade string
		protos        []string
		counted       int64 // the failure is the upstream's on a connection that confirmed http/1.1
	}{
		{"websocket to h2+http1.1", "websocket", []string{"h2", "http/1.1"}, 1},
		{"foo to a Go server listing h2 alone", "foo", []string{"h2"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h1, h2 atomic.Int64
			ca := testpki.New(t, "upstream CA")
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.ProtoMajor == 2 {
					h2.Add(1)
					w.Write([]byte("deleted"))
					return
				}
				h1.Add(1)                   // acted on: the order is deleted
				panic(http.ErrAbortHandler) // the connection is lost unanswered
			}))
			up.EnableHTTP2 = true
			up.Config.ErrorLog = log.New(io.Discard, "", 0)
			up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")},
				MinVersion: tls.VersionTLS12, NextProtos: tc.protos}
			up.StartTLS()
			t.Cleanup(up.Close)

			url := strings.Replace(up.URL, "127.0.0.1", "localhost", 1)
			srv, _ := loadServer(t, ca.Dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
			public := "http://" + serveOn(t, srv).public + "/v1/orders/42"
			srv.SampleNow()

			h := http.Header{}
			if tc.upgrade == "websocket" {
				h.Set("Sec-WebSocket-Version", "13")
				h.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			}
			s := sendUpgradeAs(t, http.MethodDelete, public, tc.upgrade, h)
			if n1, n2 := h1.Load(), h2.Load(); n1+n2 != 1 || s != http.StatusBadGateway {
				t.Errorf("one DELETE asking to switch to %q, which the upstream acted on and lost the connection of: "+
					"acted on %d times over HTTP/1.1 and %d over HTTP/2, answer %d; want once, 502", tc.upgrade, n1, n2, s)
			}
			srv.SampleNow()
			if f := srv.Degradation().Signals.Failures; f != tc.counted {
				t.Errorf("the upstream's failure counted %d times, want %d", f, tc.counted)
			}
		})
	}
}

// An upstream speaking HTTP/1.1 that takes a request with a body over
// HTTP/1.1 and fails it unanswered (its application crashing) failed it
// itself: a 502 logged and counted by the degradation signals, whatever
// ALPN it would negotiate on another connection. The HTTP/1.1 attempt
// offers http/1.1 by ALPN for a WebSocket's as for any other upgrade.
func TestAFailureOfAnUpgradeOverHTTP1IsTheUpstreams(t *testing.T) {
	var got atomic.Int64
	ca := testpki.New(t, "upstream CA")
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got.Add(1)
		panic(http.ErrAbortHandler)
	}))
	up.EnableHTTP2 = true
	up.Config.ErrorLog = log.New(io.Discard, "", 0)
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")},
		MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	up.StartTLS()
	t.Cleanup(up.Close)

	url := strings.Replace(up.URL, "127.0.0.1", "localhost", 1)
	srv, _ := loadServer(t, ca.Dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	public := "http://" + serveOn(t, srv).public + "/v1/messages"
	srv.SampleNow()

	for i := range 10 {
		req, _ := http.NewRequest(http.MethodPost, public, strings.NewReader("hello"))
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("request %d: %d, want 502", i, resp.StatusCode)
		}
	}
	if n := got.Load(); n != 10 {
		t.Fatalf("the upstream took %d requests over HTTP/1.1, want 10", n)
	}
	srv.SampleNow()
	if f := srv.Degradation().Signals.Failures; f != 10 {
		t.Errorf("10 requests the upstream took over HTTP/1.1 and failed unanswered: %d failures counted, want 10", f)
	}
}

// prefaceFirstUpstream starts an HTTPS upstream speaking HTTP/2 alone, on
// every connection whatever ALPN negotiated, that sends its connection
// preface (a SETTINGS frame) once the TLS handshake is done and closes a
// connection on which the client's preface is not HTTP/2's, as grpc-go
// does with GRPC_ENFORCE_ALPN_ENABLED=false (and did before 1.67). h
// serves the requests. It returns the upstream's URL and the directory
// holding ca.pem.
func prefaceFirstUpstream(t *testing.T, h http.Handler) (url, dir string) {
	t.Helper()
	return tlsUpstream(t, []string{"h2"}, func(c *tls.Conn) {
		if c.Handshake() != nil || http2.NewFramer(c, nil).WriteSettings() != nil {
			return
		}
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
			return // a connection error (RFC 9113 §3.4): nothing served
		}
		c.SetDeadline(time.Time{})
		(&http2.Server{}).ServeConn(bufferedConn{c, bufio.NewReader(ackDropped(c))},
			&http2.ServeConnOpts{Handler: h, SawClientPreface: true})
	})
}

// ackDropped returns the HTTP/2 frames read from c without the first
// SETTINGS acknowledgment: the client's of the SETTINGS frame sent before
// http2.Server's own, which expects one per frame it sent.
func ackDropped(c net.Conn) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		dropped := false
		for {
			var h [9]byte
			if _, err := io.ReadFull(c, h[:]); err != nil {
				pw.CloseWithError(err)
				return
			}
			p := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
			if _, err := io.ReadFull(c, p); err != nil {
				pw.CloseWithError(err)
				return
			}
			if !dropped && h[3] == 0x4 && h[4]&0x1 != 0 {
				dropped = true
				continue
			}
			if _, err := pw.Write(append(h[:], p...)); err != nil {
				return
			}
		}
	}()
	return pr
}

// An upstream speaking HTTP/2 alone that sends its connection preface on
// the HTTP/1.1 attempt's own connection took the request for a malformed
// preface and acted on nothing: a DELETE or a POST without a body is sent
// again over HTTP/2 without its Connection and Upgrade fields, and gets
// the upstream's answer, which it acted on once.
func TestAnUpgradeAnUpstreamAnswersInHTTP2IsSentAgainWithoutIt(t *testing.T) {
	var h2Plain, other atomic.Int64
	url, dir := prefaceFirstUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && r.Header.Get("Upgrade") == "" {
			h2Plain.Add(1)
		} else {
			other.Add(1)
		}
		w.Write([]byte("ok"))
	}))
	srv, _ := loadServer(t, dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	public := "http://" + serveOn(t, srv).public + "/v1/orders/42"
	srv.SampleNow()

	for _, method := range []string{http.MethodDelete, http.MethodPost} {
		for _, upgrade := range []string{"websocket", "foo"} {
			if s := sendUpgradeAs(t, method, public, upgrade, nil); s != http.StatusOK {
				t.Errorf("a %s asking to switch to %q: %d, want the upstream's 200", method, upgrade, s)
			}
		}
	}
	if h2, o := h2Plain.Load(), other.Load(); h2 != 4 || o != 0 {
		t.Errorf("the upstream acted on %d of 4 requests over HTTP/2 without Upgrade, and on %d otherwise", h2, o)
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 4 || s.Failures != 0 || l != degrade.Normal {
		t.Errorf("4 requests the upstream answered: answers %d, failures %d, level %v; want 4, 0, normal",
			s.Answers, s.Failures, l)
	}
}
