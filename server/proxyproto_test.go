package server_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// proxyServer is sluice serving cfgText (with an anonymous plan of one
// request a minute per client) in front of an API that records the
// X-Forwarded-For it is sent.
type proxyServer struct {
	srv   *server.Server
	addrs listening
	file  string
	mu    sync.Mutex
	seen  []string // X-Forwarded-For of each request the API served
}

func newProxyServer(t *testing.T, cfgText string) *proxyServer {
	t.Helper()
	p := &proxyServer{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Get("X-Forwarded-For"))
		p.mu.Unlock()
		io.WriteString(w, "upstream")
	}))
	t.Cleanup(up.Close)
	// The store's clock stands still at noon: on the wall clock, a minute
	// that ended between a test's two requests admitted the second.
	still := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0))
	p.srv, p.file = loadServerOn(t, still, t.TempDir(), "upstream: "+up.URL+"\n"+cfgText+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
anonymous_plan: anonymous
`)
	p.addrs = serveOn(t, p.srv)
	return p
}

// forwarded returns the X-Forwarded-For values the API saw, in order.
func (p *proxyServer) forwarded() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.seen, " ")
}

// clientFrom returns an HTTP client whose connections come from ip, a
// loopback address, trusting roots for HTTPS (nil: the system's).
func clientFrom(ip string, roots *x509.CertPool) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
}

// TestProxyProtocolBehindHAProxy: a real HAProxy in TCP mode, as an L4
// load balancer, sends PROXY headers (version 2 on one frontend, 1 on the
// other) to sluice's public listener. Each client is known by the address
// the header names, not HAProxy's: clients from 127.0.0.5 and 127.0.0.6
// get a quota each, and the API sees them in X-Forwarded-For. A client that
// is not a listed load balancer cannot name itself with a header of its own
// (400, nothing counted); a listed peer that sends no header is refused
// (400) and counted, one that connects and closes is not.
func TestProxyProtocolBehindHAProxy(t *testing.T) {
	p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]")
	addrs, srv, file := p.addrs, p.srv, p.file
	v2, v1 := realtest.FreeAddr(t), realtest.FreeAddr(t)
	realtest.HAProxy(t, v2, fmt.Sprintf(`defaults
  mode tcp
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend v2
  bind %s
  default_backend sluice_v2
backend sluice_v2
  server sluice %s send-proxy-v2
frontend v1
  bind %s
  default_backend sluice_v1
backend sluice_v1
  server sluice %s send-proxy
`, v2, addrs.public, v1, addrs.public))

	from := func(ip string) *http.Client { return clientFrom(ip, nil) }
	get := func(c *http.Client, addr string) int {
		t.Helper()
		resp, err := c.Get("http://" + addr + "/v1/items")
		if err != nil {
			t.Fatalf("GET through %s: %v", addr, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	five, six := from("127.0.0.5"), from("127.0.0.6")
	if a, b := get(five, v2), get(five, v2); a != 200 || b != 429 {
		t.Errorf("127.0.0.5 through PROXY v2: %d then %d, want 200 then 429 (its own quota of 1)", a, b)
	}
	if a, b := get(six, v1), get(six, v1); a != 200 || b != 429 {
		t.Errorf("127.0.0.6 through PROXY v1: %d then %d, want 200 then 429 (a quota apart from 127.0.0.5's)", a, b)
	}
	if got := p.forwarded(); got != "127.0.0.5 127.0.0.6" {
		t.Errorf("the API saw X-Forwarded-For %q, want the clients the headers named: 127.0.0.5 127.0.0.6", got)
	}

	// rawTo sends text from ip to addr and returns the first line back.
	rawTo := func(addr, ip, text string) string {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, text)
		line, _ := bufio.NewReader(conn).ReadString('\n')
		return line
	}
	raw := func(ip, text string) string { return rawTo(addrs.public, ip, text) }
	request := "GET /v1/items HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n"
	// A client that is no load balancer names itself 203.0.113.9: the
	// header is not read, the request is malformed.
	if line := raw("127.0.0.7", "PROXY TCP4 203.0.113.9 127.0.0.1 4000 80\r\n"+request); !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("a stranger's PROXY header: %q, want a 400", line)
	}
	if line := raw("127.0.0.7", request); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Errorf("the stranger's own request: %q, want a 200 (the refused one counted nothing)", line)
	}
	// A listed peer: a TCP health check (connect, close) is not counted; a
	// connection without a header is refused before a request is read.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}, Timeout: 5 * time.Second}
	if conn, err := d.Dial("tcp", addrs.public); err != nil {
		t.Fatal(err)
	} else {
		conn.Close()
	}
	if line := raw("127.0.0.1", request); !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("a load balancer's connection without a header: %q, want a 400", line)
	}
	metrics := func() string {
		resp, err := http.Get("http://" + addrs.admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if m := metrics(); !strings.Contains(m, "sluice_proxy_header_refusals_total 1\n") {
		t.Errorf("metrics: want sluice_proxy_header_refusals_total 1 (the connection without a header, not the health check):\n%s",
			grepLines(m, "proxy_header"))
	}

	// The list follows reloads: HAProxy is no longer listed, so its
	// headers are not read.
	text, _ := os.ReadFile(file)
	if err := os.WriteFile(file, []byte(strings.Replace(string(text), "[127.0.0.1/32]", "[192.0.2.1/32]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	// sluice may answer the unread header with its 400 before the request
	// is even sent: read the first line the connection brings.
	if line := rawTo(v2, "127.0.0.9", request); !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("through HAProxy once it is no longer listed: %q, want a 400 (its header unread)", line)
	}
}

// TestProxyProtocolBeforeTLS: behind a TCP load balancer that sends a
// PROXY header and leaves TLS to sluice, the header comes before the
// handshake; the client is the one the header names.
func TestProxyProtocolBeforeTLS(t *testing.T) {
	ca := testpki.New(t, "public CA")
	ca.Server(t, "public")
	p := newProxyServer(t, "proxy_protocol: [127.0.0.1/32]\ntls: {cert_file: "+ca.File("public")+", key_file: "+ca.KeyFile("public")+"}")
	lb := realtest.FreeAddr(t)
	realtest.HAProxy(t, lb, fmt.Sprintf(`defaults
  mode tcp
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend tls
  bind %s
  default_backend sluice
backend sluice
  server sluice %s send-proxy-v2
`, lb, p.addrs.public))
	c := clientFrom("127.0.0.8", ca.Pool)
	for i, want := range []int{200, 429} {
		resp, err := c.Get("https://" + lb + "/v1/items")
		if err != nil {
			t.Fatalf("HTTPS through the load balancer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("request %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if got := p.forwarded(); got != "127.0.0.8" {
		t.Errorf("the API saw X-Forwarded-For %q, want 127.0.0.8", got)
	}
}
