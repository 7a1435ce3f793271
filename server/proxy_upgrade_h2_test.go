package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// grpcTLSUpstream starts a gRPC health service behind TLS (grpc-go, which
// accepts h2 alone by ALPN, and completes a handshake offering http/1.1
// only to close the connection) and returns the configuration naming it.
func grpcTLSUpstream(t *testing.T) (cfg, dir string) {
	t.Helper()
	ca := testpki.New(t, "upstream CA")
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{ca.Server(t, "upstream")}, MinVersion: tls.VersionTLS12})))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return "upstream: https://localhost:" + port + "\nupstream_tls: {ca_file: ca.pem}\n" + upgradeLimits, ca.Dir
}

// docs/grpc.md has https:// reach a gRPC service behind TLS, over HTTP/2 by
// ALPN. Such a service speaks no HTTP/1.1, over which a request switching
// protocols goes to an https upstream: the proxy sends it again over
// HTTP/2 without its Connection and Upgrade fields, as to an h2c upstream,
// and the client gets the service's answer — not a 502 counted as the
// failure of a healthy upstream, which one client's WebSocket handshakes
// within its limits would raise the level with for every client. grpc-go
// ends a connection that negotiated no protocol by ALPN without a byte,
// which is no evidence that it did not act on the request: a GET (every
// WebSocket handshake, RFC 6455 §4.1) is sent again as replayable, and a
// POST without a body is not, a 502 that is not counted either.
func TestAnUpgradeToAnHTTPSUpstreamSpeakingOnlyHTTP2IsSentWithoutIt(t *testing.T) {
	cfg, dir := grpcTLSUpstream(t)
	srv, _ := loadServer(t, dir, cfg)
	url := "http://" + serveOn(t, srv).public + "/grpc.health.v1.Health/Check"
	srv.SampleNow()

	for i := range 20 {
		if s := sendUpgradeAs(t, http.MethodGet, url, "websocket", nil); s == http.StatusBadGateway {
			t.Fatalf("upgrade request %d to a healthy gRPC service behind TLS: 502, want the service's answer", i)
		}
		if s := sendUpgradeAs(t, http.MethodPost, url, "foo", nil); s != http.StatusBadGateway {
			t.Fatalf("POST %d asking a gRPC service behind TLS to switch protocols: %d, want 502 (not sent again)", i, s)
		}
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 20 || s.Failures != 0 || l != degrade.Normal {
		t.Errorf("20 upgrade requests the gRPC service answered, 20 it could not be asked: answers %d, failures %d, level %v; "+
			"want 20, 0, normal", s.Answers, s.Failures, l)
	}
}

// A request switching protocols with a body cannot be sent again once the
// HTTP/1.1 attempt read it: to an upstream speaking only HTTP/2, which
// sent its HTTP/2 preface on the attempt's connection, it is a 502, but no
// failure of the upstream's, which was asked in a protocol it does not
// speak.
func TestAnUpgradeWithABodyToAnHTTPSUpstreamSpeakingOnlyHTTP2IsNoUpstreamFailure(t *testing.T) {
	var reached atomic.Int64
	up, dir := prefaceFirstUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
	}))
	srv, _ := loadServer(t, dir, "upstream: "+up+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	url := "http://" + serveOn(t, srv).public + "/v1/messages"
	srv.SampleNow()

	for range 20 {
		req, _ := http.NewRequest("POST", url, strings.NewReader("body"))
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "foo")
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("an upgrade request with a body to an upstream speaking only HTTP/2: %d, want 502", resp.StatusCode)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the upstream served %d requests, want none", n)
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 0 || l != degrade.Normal {
		t.Errorf("20 upgrade requests the upstream could not be asked over HTTP/1.1: answers %d, failures %d, level %v; want none counted, normal",
			s.Answers, s.Failures, l)
	}
}

// An upstream speaking only HTTP/2 may refuse a TLS handshake offering
// http/1.1 alone with the alert no_application_protocol (RFC 7301 §3.2),
// as servers not written in Go do: the request is sent over HTTP/2 without
// its Connection and Upgrade fields, and answered.
func TestAnUpgradeToAnHTTPSUpstreamRefusingHTTP1ByALPNIsSentWithoutIt(t *testing.T) {
	var h2Plain, other atomic.Int64
	ca := testpki.New(t, "upstream CA")
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && r.Header.Get("Upgrade") == "" {
			h2Plain.Add(1)
		} else {
			other.Add(1)
		}
		w.Write([]byte("ok"))
	}))
	up.EnableHTTP2 = true
	up.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses
	certs := []tls.Certificate{ca.Server(t, "upstream")}
	up.TLS = &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			protos := []string{"h2"}
			if !slices.Contains(hello.SupportedProtos, "h2") {
				protos = []string{"acme-tls/1"} // none the client offers: the alert
			}
			return &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS12, NextProtos: protos}, nil
		}}
	up.StartTLS()
	t.Cleanup(up.Close)

	srv, _ := loadServer(t, ca.Dir, "upstream: "+up.URL+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	url := "http://" + serveOn(t, srv).public + "/v1/items"
	srv.SampleNow()

	for i := range 20 {
		if s := sendUpgrade(t, url, "foo"); s != http.StatusOK {
			t.Fatalf("upgrade request %d to an upstream refusing http/1.1 by ALPN: %d, want its 200", i, s)
		}
	}
	if h2, o := h2Plain.Load(), other.Load(); h2 != 20 || o != 0 {
		t.Errorf("the upstream got %d of 20 requests over HTTP/2 without Upgrade, and %d otherwise", h2, o)
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 20 || s.Failures != 0 || l != degrade.Normal {
		t.Errorf("20 requests the upstream answered: answers %d, failures %d, level %v; want 20, 0, normal",
			s.Answers, s.Failures, l)
	}
}

// Go's HTTP/2 transport refuses, unsent, a request whose header list is
// larger than the upstream advertised (SETTINGS_MAX_HEADER_LIST_SIZE).
// Sent, the upstream would have answered 431, the client's mistake: the
// proxy answers its own 431 and counts no outcome of the upstream's, which
// was not asked, so that one client's large headers within sluice's own
// max_header_bytes cannot raise the level for everyone.
func TestAHeaderListLargerThanTheH2UpstreamAcceptsIsTheClientsMistake(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	up.Config.MaxHeaderBytes = 16 << 10
	up.Config.Protocols = new(http.Protocols)
	up.Config.Protocols.SetUnencryptedHTTP2(true)
	up.Start()
	t.Cleanup(up.Close)

	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+strings.TrimPrefix(up.URL, "http://")+"\n"+upgradeLimits)
	url := "http://" + serveOn(t, srv).public + "/v1/orders"
	srv.SampleNow()

	// A first request opens the connection and learns the upstream's
	// SETTINGS, so that the transport knows its header list limit.
	if s := sendUpgrade(t, url, ""); s != http.StatusOK {
		t.Fatalf("a plain request: %d, want 200", s)
	}
	for range 20 {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("X-Big", strings.Repeat("a", 40<<10))
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("a 40 KiB header to an h2c upstream advertising a 20 KiB header list: %d, want 431", resp.StatusCode)
		}
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 1 || s.Failures != 0 || l != degrade.Normal {
		t.Errorf("1 request the upstream answered beside 20 refused unsent: answers %d, failures %d, level %v; want 1, 0, normal",
			s.Answers, s.Failures, l)
	}
}

// bufferedConn is a net.Conn whose reads start with what r buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// A client's offer to switch its connection to HTTP/2 is ignored however
// it names the protocol — h2 (its name over TLS, which Apache's mod_http2
// switches to with H2Upgrade on) as h2c: an upstream switching would let
// the client speak HTTP/2 straight to it through the switched connection,
// every request on it past the limiter unseen. The upstream here switches
// on Upgrade: h2 and then serves HTTP/2 on the connection.
func TestAnOfferToSwitchToH2CannotSmuggleRequestsPastTheLimits(t *testing.T) {
	var reached atomic.Int64
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte("ok"))
	})
	url, dir := httpsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "h2" || r.Header.Get("Http2-Settings") == "" {
			inner(w, r)
			return
		}
		reached.Add(1)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2\r\n\r\n")
		rw.Flush()
		(&http2.Server{}).ServeConn(bufferedConn{conn, rw.Reader}, &http2.ServeConnOpts{Handler: inner})
	})
	srv, _ := loadServer(t, dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]
anonymous_plan: anonymous
`)
	public := serveOn(t, srv).public

	c, err := net.Dial("tcp", public)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+public+"\r\nConnection: Upgrade\r\nUpgrade: h2\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return // the offer was not passed on: nothing smuggled
	}
	cc, err := (&http2.Transport{}).NewClientConn(bufferedConn{c, br})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		req, _ := http.NewRequest("GET", "https://upstream/v1/orders", nil)
		r, err := cc.RoundTrip(req)
		if err != nil {
			break
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	if n := reached.Load(); n > 3 {
		t.Errorf("a client allowed 3 requests a minute switched its connection to HTTP/2 with Upgrade: h2 and got %d requests to the upstream; want at most 3 (the offer ignored)", n)
	}
}

// Every name of HTTP/2 in an Upgrade field, in any case and beside other
// protocols, has the offer ignored: the upstream gets neither Upgrade nor
// HTTP2-Settings. Other protocols' offers reach it.
func TestEveryNameOfHTTP2InAnUpgradeIsIgnored(t *testing.T) {
	got := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Upgrade") + "|" + r.Header.Get("Http2-Settings")
		w.Write([]byte("ok"))
	}))
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+upgradeLimits)
	url := "http://" + serveOn(t, srv).public + "/v1/items"

	for _, tc := range []struct{ upgrade, want string }{
		{"h2c", "|"}, {"H2C", "|"}, {"h2", "|"}, {"H2", "|"}, {"HTTP/2.0", "|"}, {"http/2", "|"},
		{"h2-14", "|"}, {"h2c-14", "|"}, {"foo, h2", "|"}, {"foo ,  HTTP/2.0 ", "|"},
		{"foo", "foo|AAMAAABkAAQAAP__"}, {"h2x", "h2x|AAMAAABkAAQAAP__"}, {"HTTP/1.1", "HTTP/1.1|AAMAAABkAAQAAP__"},
	} {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", tc.upgrade)
		req.Header.Set("HTTP2-Settings", "AAMAAABkAAQAAP__")
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case g := <-got:
			if g != tc.want {
				t.Errorf("Upgrade: %q: the upstream got Upgrade|HTTP2-Settings %q, want %q", tc.upgrade, g, tc.want)
			}
		default:
			t.Errorf("Upgrade: %q: %d, the upstream was not asked", tc.upgrade, resp.StatusCode)
		}
	}
}

// A gRPC call's metadata larger than the service advertised it accepts
// (grpc-go's MaxHeaderListSize) is refused unsent by the proxy's HTTP/2
// transport: INVALID_ARGUMENT, the caller's mistake, and no failure of the
// service's.
func TestACallsMetadataLargerThanTheServiceAcceptsIsAnInvalidArgument(t *testing.T) {
	gs := grpc.NewServer(grpc.MaxHeaderListSize(8 << 10))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+ln.Addr().String()+"\n"+upgradeLimits)
	conn := dialInsecure(t, serveOn(t, srv).public)
	srv.SampleNow()

	call := func(ctx context.Context) error {
		return conn.Invoke(ctx, "/grpc.health.v1.Health/Check", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	}
	if err := call(context.Background()); err != nil {
		t.Fatalf("a call with no metadata: %v", err) // and the proxy learns the service's SETTINGS
	}
	for range 10 {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-big", strings.Repeat("a", 20<<10))
		if err := call(ctx); grpcstatus.Code(err) != codes.InvalidArgument {
			t.Fatalf("a call with 20 KiB of metadata to a service accepting 8 KiB: %v, want InvalidArgument", err)
		}
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 1 || s.Failures != 0 || l != degrade.Normal {
		t.Errorf("1 call the service answered beside 10 refused unsent: answers %d, failures %d, level %v; want 1, 0, normal",
			s.Answers, s.Failures, l)
	}
}

// noALPNUpstream starts an HTTPS upstream speaking HTTP/1.1 that negotiates
// no protocol by ALPN, as Node's https module, stunnel or an HAProxy bind
// without alpn do. serve is called for each request read, with the
// connection, and answers or closes it. It returns the upstream's URL and
// the directory holding ca.pem.
func noALPNUpstream(t *testing.T, serve func(r *http.Request, c net.Conn)) (url, dir string) {
	t.Helper()
	return tlsUpstream(t, nil, func(c *tls.Conn) {
		br := bufio.NewReader(c)
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, r.Body)
			serve(r, c)
		}
	})
}

// tlsUpstream starts an HTTPS upstream on a certificate of a new CA whose
// listener offers protos by ALPN, and has serve speak on each connection,
// closed when serve returns or 10 s after it was accepted. It returns the
// upstream's URL and the directory holding ca.pem.
func tlsUpstream(t *testing.T, protos []string, serve func(c *tls.Conn)) (url, dir string) {
	t.Helper()
	ca := testpki.New(t, "upstream CA")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{ca.Server(t, "upstream")}, MinVersion: tls.VersionTLS12, NextProtos: protos})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(c.(*tls.Conn))
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return "https://localhost:" + port, ca.Dir
}

func answerOK(c net.Conn) {
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
}

// sendUpgradeAs sends a request of method asking to switch to upgrade,
// with the fields of h, and returns the status of its answer.
func sendUpgradeAs(t *testing.T, method, url, upgrade string, h http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", upgrade)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// A proxy must not retry a non-idempotent request (RFC 9110 §9.2.2). An
// HTTP/1.1 upstream negotiating nothing by ALPN that acts on a DELETE or
// a POST without a body asking to switch protocols, then loses the
// connection unanswered, speaks no h2: the request is not sent again over
// HTTP/2, and the answer is a 502. It is not counted as the upstream's
// failure: a gRPC service closes such a connection so too, for a request
// it was asked in a protocol it does not speak.
func TestANonIdempotentUpgradeRequestToAnUpstreamWithoutALPNIsSentOnce(t *testing.T) {
	for _, method := range []string{http.MethodDelete, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			var got atomic.Int64
			url, dir := noALPNUpstream(t, func(r *http.Request, c net.Conn) {
				got.Add(1)
				c.Close() // acted on, then the connection is lost unanswered
			})
			srv, _ := loadServer(t, dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
			public := "http://" + serveOn(t, srv).public + "/v1/orders/42"
			srv.SampleNow()

			s := sendUpgradeAs(t, method, public, "websocket", nil)
			if n := got.Load(); n != 1 || s != http.StatusBadGateway {
				t.Errorf("one %s the upstream lost the connection on: received %d times, answer %d; want once, 502", method, n, s)
			}
			srv.SampleNow()
			if f := srv.Degradation().Signals.Failures; f != 0 {
				t.Errorf("a failure the upstream closed the connection without a byte for counted %d times, want 0", f)
			}
		})
	}
}

// A replayable request (a GET, or one with an Idempotency-Key) that such
// an upstream fails unanswered may be sent again, as net/http retries it:
// over the upstream's own protocol, without its Connection and Upgrade
// fields, and answered.
func TestAReplayableUpgradeRequestToAnUpstreamWithoutALPNIsSentAgainWithoutIt(t *testing.T) {
	var upgrades, plain atomic.Int64
	url, dir := noALPNUpstream(t, func(r *http.Request, c net.Conn) {
		if r.Header.Get("Upgrade") != "" {
			upgrades.Add(1)
			c.Close()
			return
		}
		plain.Add(1)
		answerOK(c)
	})
	srv, _ := loadServer(t, dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	public := "http://" + serveOn(t, srv).public + "/v1/orders/42"

	if s := sendUpgradeAs(t, http.MethodGet, public, "foo", nil); s != http.StatusOK {
		t.Errorf("a GET: %d, want the upstream's 200", s)
	}
	if s := sendUpgradeAs(t, http.MethodDelete, public, "foo", http.Header{"Idempotency-Key": {"k1"}}); s != http.StatusOK {
		t.Errorf("a DELETE with an Idempotency-Key: %d, want the upstream's 200", s)
	}
	if u, p := upgrades.Load(), plain.Load(); u != 2 || p != 2 {
		t.Errorf("the upstream got %d requests with Upgrade and %d without; want 2 and 2", u, p)
	}
}

// The text of net/http's error refusing a header list unsent may appear in
// another error, which quotes what the client sent: httputil.ReverseProxy's
// for an upstream switching to another protocol than the client's Upgrade
// named. A client naming that text gets the upstream's wrong switch (RFC
// 9110 §7.8) as it is, a 502 counted as the upstream's failure, not a 431
// of its own, neither logged nor counted.
func TestAnUpstreamsWrongSwitchIsNoHeaderListTooLarge(t *testing.T) {
	ca := testpki.New(t, "upstream CA")
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			var reached atomic.Int64
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Add(1)
				c, rw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return
				}
				defer c.Close()
				rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
				rw.Flush()
			}))
			if scheme == "https" {
				up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")}, MinVersion: tls.VersionTLS12}
				up.StartTLS()
			} else {
				up.Start()
			}
			t.Cleanup(up.Close)
			cfg := "upstream: " + strings.Replace(up.URL, "127.0.0.1", "localhost", 1) + "\n"
			if scheme == "https" {
				cfg += "upstream_tls: {ca_file: ca.pem}\n"
			}
			srv, _ := loadServer(t, ca.Dir, cfg+upgradeLimits)
			public := "http://" + serveOn(t, srv).public + "/v1/items"
			srv.SampleNow()

			s := sendUpgradeAs(t, http.MethodGet, public, "request header list larger than peer's advertised limit", nil)
			if reached.Load() != 1 {
				t.Fatalf("the upstream was asked %d times, want 1", reached.Load())
			}
			srv.SampleNow()
			if f := srv.Degradation().Signals.Failures; s != http.StatusBadGateway || f != 1 {
				t.Errorf("an upstream switching to a protocol the client did not ask: %d, failures counted %d; want 502, 1", s, f)
			}
		})
	}
}
