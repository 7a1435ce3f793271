package server_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// upgradeLimits admits every request of these tests, and raises the level
// at an error rate of 0.5 over 5 answers or more.
const upgradeLimits = `
plans:
  anonymous:
    limits: [{name: per-second, algorithm: gcra, quantity: 100000, window: 1s}]
anonymous_plan: anonymous
degradation:
  min_answers: 5
  interval: 1m
  min_dwell: 1m
  levels:
    elevated: {enter: {error_rate: 0.5}, leave: {error_rate: 0.1}}
`

// sendUpgrade sends GET url, asking to switch to upgrade ("": a plain
// request), and returns the answer's status.
func sendUpgrade(t *testing.T, url, upgrade string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if upgrade != "" {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", upgrade)
	}
	if upgrade == "websocket" {
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// An upstream reached over HTTP/2 without TLS (upstream: h2c://…, a gRPC
// service and its HTTP/JSON gateway on one port) cannot be asked to switch
// protocols: HTTP/2 carries no Connection or Upgrade field (RFC 9113
// §8.2.2), and Go's HTTP/2 transport refuses a request carrying them
// unsent. The proxy drops them and sends the request, which the upstream
// answers as an HTTP/1.1 server ignoring the Upgrade would (RFC 9110
// §7.8): the client gets the upstream's answer, not a 502 counted as the
// failure of an upstream that was never asked, so that one client's
// upgrade requests cannot raise the level for every client of a healthy
// service.
func TestAnUpgradeToAnH2CUpstreamIsSentWithoutIt(t *testing.T) {
	var upgrades atomic.Int64
	up := h2cUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || r.Header.Get("Connection") != "" {
			upgrades.Add(1)
		}
		w.Write([]byte("ok"))
	})
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up+"\n"+upgradeLimits)
	url := "http://" + serveOn(t, srv).public + "/v1/orders"
	srv.SampleNow()

	for i := range 20 {
		if s := sendUpgrade(t, url, "websocket"); s != http.StatusOK {
			t.Fatalf("upgrade request %d to a healthy h2c upstream: %d, want its 200", i, s)
		}
	}
	if n := upgrades.Load(); n != 0 {
		t.Errorf("the h2c upstream saw Connection or Upgrade on %d requests, want none", n)
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; l != degrade.Normal || s.Answers != 20 || s.Failures != 0 {
		t.Errorf("20 upgrade requests the healthy h2c upstream answered: level %v, answers %d, failures %d; want normal, 20, 0",
			l, s.Answers, s.Failures)
	}
}

// httpsUpstream starts h behind TLS, offering HTTP/2 by ALPN as most https
// servers, balancers and CDNs do, and returns its URL and the directory of
// the CA file (ca.pem) that verifies it.
func httpsUpstream(t *testing.T, h http.HandlerFunc) (url, dir string) {
	t.Helper()
	ca := testpki.New(t, "upstream CA")
	up := httptest.NewUnstartedServer(h)
	up.EnableHTTP2 = true
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")}, MinVersion: tls.VersionTLS12}
	up.StartTLS()
	t.Cleanup(up.Close)
	return up.URL, ca.Dir
}

// Over https an upstream negotiating HTTP/2 would get every request Go's
// transport does not keep on HTTP/1.1 — all but a WebSocket's — over
// HTTP/2, where the Upgrade field makes the transport refuse it unsent: a
// request asking to switch to another protocol ("Upgrade: foo", which an
// HTTP/1.1 server ignores and answers) would be a 502 counted as the
// upstream's failure. The proxy sends every request switching protocols
// over HTTP/1.1, Upgrade and all: the upstream ignores it and answers, and
// the other requests keep HTTP/2.
func TestAnUpgradeToAnHTTPSUpstreamGoesOverHTTP1(t *testing.T) {
	var upgradesH1, plainH2 atomic.Int64
	url, dir := httpsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Upgrade") == "foo" && r.ProtoMajor == 1:
			upgradesH1.Add(1)
		case r.Header.Get("Upgrade") == "" && r.ProtoMajor == 2:
			plainH2.Add(1)
		}
		w.Write([]byte("ok"))
	})
	srv, _ := loadServer(t, dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	front := "http://" + serveOn(t, srv).public + "/v1/items"
	srv.SampleNow()

	if s := sendUpgrade(t, front, ""); s != http.StatusOK {
		t.Fatalf("a plain request: %d, want 200", s)
	}
	for i := range 20 {
		if s := sendUpgrade(t, front, "foo"); s != http.StatusOK {
			t.Fatalf("request %d asking for Upgrade: foo: %d, want the upstream's 200", i, s)
		}
	}
	if h1, h2 := upgradesH1.Load(), plainH2.Load(); h1 != 20 || h2 != 1 {
		t.Errorf("the upstream got %d of 20 upgrade requests over HTTP/1.1 with their Upgrade, and %d of 1 plain one over HTTP/2", h1, h2)
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; l != degrade.Normal || s.Answers != 21 || s.Failures != 0 {
		t.Errorf("21 requests the healthy https upstream answered: level %v, answers %d, failures %d; want normal, 21, 0",
			l, s.Answers, s.Failures)
	}
}

// An https upstream that speaks HTTP/2 may still switch an HTTP/1.1
// connection to another protocol, as an http:// upstream may: the proxy's
// request goes over HTTP/1.1, and the switched connection carries the
// client's bytes both ways.
func TestAnHTTPSUpstreamMaySwitchProtocols(t *testing.T) {
	url, dir := httpsUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			w.Write([]byte("ok"))
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		rw.Flush()
		line, _ := rw.ReadString('\n')
		rw.WriteString(line)
		rw.Flush()
	})
	srv, _ := loadServer(t, dir, "upstream: "+url+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits)
	public := serveOn(t, srv).public

	c, err := net.Dial("tcp", public)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /echo HTTP/1.1\r\nHost: "+public+"\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("Upgrade: echo to an https upstream that switches: %d, want 101", resp.StatusCode)
	}
	io.WriteString(c, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Errorf("the switched connection echoed %q (%v), want \"ping\\n\"", line, err)
	}
}

// The error rate is of the upstream's answers. A request asking to switch
// to a protocol whose name is not printable ASCII is refused by the proxy
// unsent, with a 400 of its own (TestAnUpgradeToAnInvalidProtocolIsTheClientsBadRequest):
// no answer of the upstream's, neither its status nor its latency counted.
// Counted, such requests from a client within its limits would dilute the
// error rate (and the p99) of a failing upstream at no cost to it, hiding
// its outage: here an upstream failing every request it is sent reads an
// error rate of 1, not 0.1.
func TestARequestTheProxyRefusesUnsentIsNoUpstreamAnswer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError) // fails every request it is sent
	}))
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+upgradeLimits)
	url := "http://" + serveOn(t, srv).public + "/api/items"
	srv.SampleNow()

	for range 10 {
		if s := sendUpgrade(t, url, ""); s != http.StatusInternalServerError {
			t.Fatalf("a request to the failing upstream: %d, want its 500", s)
		}
	}
	for range 90 {
		if s := sendUpgrade(t, url, "web\x80socket"); s != http.StatusBadRequest {
			t.Fatalf("a request naming a protocol that is not printable ASCII: %d, want the proxy's 400", s)
		}
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Answers != 10 || s.ErrorRate != 1 || l != degrade.Elevated {
		t.Errorf("an upstream that failed all 10 requests it was sent, beside 90 the proxy refused unsent: answers %d, failures %d, error rate %v, level %v; want 10 answers, an error rate of 1, elevated",
			s.Answers, s.Failures, s.ErrorRate, l)
	}
}
