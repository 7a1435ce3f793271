package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluice-dev/sluice/degrade"
)

// proxyEnvChild names the test a re-executed test binary runs with
// HTTPS_PROXY set: net/http reads the proxy environment once a process.
const proxyEnvChild = "SLUICE_TEST_PROXY_ENV_CHILD"

// inProxyEnvChild runs the calling test again in a new test process with
// HTTPS_PROXY pointing at a CONNECT proxy the child starts, and reports the
// child's failures as its own. It returns true in the child.
func inProxyEnvChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(proxyEnvChild) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), proxyEnvChild+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("%s\n%v", out, err)
	}
	return false
}

// connectProxy starts an HTTP proxy answering CONNECT to any
// host by tunnelling to the same port on 127.0.0.1, sets HTTPS_PROXY to it
// (NO_PROXY cleared), and returns how many tunnels it opened.
func connectProxy(t *testing.T) *atomic.Int64 {
	t.Helper()
	var tunnels atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil || req.Method != http.MethodConnect {
					return
				}
				_, port, err := net.SplitHostPort(req.Host)
				if err != nil {
					return
				}
				up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
				if err != nil {
					io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
					return
				}
				track(up)
				defer up.Close()
				tunnels.Add(1)
				io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				done := make(chan struct{}, 2)
				go func() { io.Copy(up, br); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
				go func() { io.Copy(c, up); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
				<-done
				<-done
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	for _, k := range []string{"NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "https_proxy"} {
		os.Unsetenv(k)
	}
	t.Setenv("HTTPS_PROXY", "http://"+ln.Addr().String())
	return &tunnels
}

// proxiedUpstream rewrites an upstream configuration on
// https://localhost:port to name a host that is not the loopback (net/http
// proxies no request to localhost), reached through the CONNECT proxy,
// whose certificate is still verified for localhost.
func proxiedUpstream(cfg string) string {
	cfg = strings.Replace(cfg, "https://localhost:", "https://upstream.invalid:", 1)
	return strings.Replace(cfg, "upstream_tls: {ca_file: ca.pem}", "upstream_tls: {ca_file: ca.pem, server_name: localhost}", 1)
}

// A failure of an upgrade request on a new connection that negotiated no
// protocol by ALPN and heard nothing is logged but not counted by the
// degradation signals: a client within its limits must not raise the
// level for everyone by asking a gRPC service to switch protocols. Through
// a CONNECT proxy (HTTPS_PROXY, which the proxy's transports honour) the
// attempt's TLS is added by net/http and its bytes are not watched: such a
// failure is no evidence either way, and not counted either.
func TestAnUpgradeToAGRPCServiceThroughHTTPSProxyIsNotCounted(t *testing.T) {
	if !inProxyEnvChild(t) {
		return
	}
	tunnels := connectProxy(t)
	cfg, dir := grpcTLSUpstream(t)
	srv, _ := loadServer(t, dir, proxiedUpstream(cfg))
	url := "http://" + serveOn(t, srv).public + "/grpc.health.v1.Health/Check"
	srv.SampleNow()

	for i := range 10 {
		if s := sendUpgradeAs(t, http.MethodGet, url, "websocket", nil); s == http.StatusBadGateway {
			t.Fatalf("upgrade GET %d to a healthy gRPC service: 502, want the service's answer", i)
		}
		if s := sendUpgradeAs(t, http.MethodPost, url, "foo", nil); s != http.StatusBadGateway {
			t.Fatalf("POST %d asking a gRPC service to switch protocols: %d, want 502 (not sent again)", i, s)
		}
	}
	if tunnels.Load() == 0 {
		t.Fatal("no request went through HTTPS_PROXY: the test proves nothing")
	}
	l := srv.SampleNow()
	if s := srv.Degradation().Signals; s.Failures != 0 || l != degrade.Normal {
		t.Errorf("through HTTPS_PROXY, 10 upgrade requests a gRPC service answered and 10 it could not be asked: "+
			"answers %d, failures %d, level %v; want no failure counted, normal (as without a proxy)", s.Answers, s.Failures, l)
	}
}

// Through HTTPS_PROXY the first bytes of the attempt's connection are not
// watched, so an upstream answering in HTTP/2 there gives no evidence that
// it did not act on the request: a DELETE asking to switch protocols is
// not sent again (RFC 9110 §9.2.2), a 502 not counted as the upstream's
// failure (without a proxy it is sent again over HTTP/2:
// TestAnUpgradeAnUpstreamAnswersInHTTP2IsSentAgainWithoutIt).
func TestAnUpgradeThroughHTTPSProxyIsSentOnceAndNotCounted(t *testing.T) {
	if !inProxyEnvChild(t) {
		return
	}
	tunnels := connectProxy(t)
	var h2Plain, other atomic.Int64
	up, dir := prefaceFirstUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && r.Header.Get("Upgrade") == "" {
			h2Plain.Add(1)
		} else {
			other.Add(1)
		}
		w.Write([]byte("ok"))
	}))
	srv, _ := loadServer(t, dir, proxiedUpstream("upstream: "+up+"\nupstream_tls: {ca_file: ca.pem}\n"+upgradeLimits))
	public := "http://" + serveOn(t, srv).public + "/v1/orders/42"
	srv.SampleNow()

	for range 4 {
		if s := sendUpgradeAs(t, http.MethodDelete, public, "foo", nil); s != http.StatusBadGateway {
			t.Errorf("a DELETE asking to switch to foo through HTTPS_PROXY, the upstream answering in HTTP/2: %d, want 502", s)
		}
	}
	if tunnels.Load() == 0 {
		t.Fatal("no request went through HTTPS_PROXY: the test proves nothing")
	}
	if h2, o := h2Plain.Load(), other.Load(); h2 != 0 || o != 0 {
		t.Errorf("the upstream acted on %d of 4 DELETEs over HTTP/2 without Upgrade, on %d otherwise; want none sent again", h2, o)
	}
	srv.SampleNow()
	if s := srv.Degradation().Signals; s.Failures != 0 {
		t.Errorf("failures counted %d, want 0: the upstream failed nothing", s.Failures)
	}
}
