package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chunkedEarlyUpstream answers every request with a chunked 401 as soon as
// it read the request's header, before it reads the body (an upstream
// refusing an upload unread whose framework streams its answer), then
// reads and discards whatever the connection brings.
func chunkedEarlyUpstream(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					h, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if h == "\r\n" {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nnope.\n\r\n0\r\n\r\n")
				io.Copy(io.Discard, br)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// An early answer is sent whole at once: a client streaming an upload
// whose source pauses (a live feed), or one that waits for the answer
// before it sends more, reads the upstream's refusal to its end, not an
// answer whose last chunk waits on what is left of the body (or is cut
// when stream_idle_timeout passes first).
func TestAChunkedEarlyAnswerEndsAtOnce(t *testing.T) {
	up := chunkedEarlyUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up+`
connections: {read_timeout: 8s, write_timeout: 5s, stream_idle_timeout: 5s}
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
`)
	addrs := serveOn(t, srv)
	conn, err := net.Dial("tcp", addrs.public)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /upload HTTP/1.1\r\nHost: example.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("the upstream's early chunked 401 broke off (%v) %v after it was sent: want it whole at once; the drain of the body's rest (read_timeout 8s) held its last chunk back past stream_idle_timeout (5s)", err, took.Round(100*time.Millisecond))
	}
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "nope.") {
		t.Fatalf("the early answer: %d %q, want the upstream's 401", resp.StatusCode, body)
	}
	if took > 3*time.Second {
		t.Fatalf("the end of the upstream's early chunked 401 reached the client %v after it was sent (read_timeout 8s): want it at once; the drain of the body's rest held the answer's last chunk back", took.Round(100*time.Millisecond))
	}
}

// The proxy's own failure on a gRPC-Web call over HTTP/1.1 is a
// trailers-only answer, HTTP 200 with grpc-status 14 (UNAVAILABLE) in its
// header, as docs/decisions.md and grpcAnswer's doc say of the proxy's own
// 502, also when the upstream cannot be reached and the transport never
// read the call's body: nothing the proxy does with the body's rest
// writes the answer's header under grpcAnswer, which holds the 502 back
// to turn it into a gRPC status.
func TestAGRPCWebCallToADeadUpstreamGetsItsStatusWithItsBodyUnread(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens: the dial is refused
	srv, _ := loadServer(t, t.TempDir(), "upstream: http://"+dead+"\n"+grpcConfig)
	public := serveOn(t, srv).public

	req, err := http.NewRequest(http.MethodPost, "http://"+public+"/pkg.S/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc-web+proto")
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Grpc-Status") != "14" || err != nil {
		t.Fatalf("a gRPC-Web call to an upstream that cannot be reached: %d, Content-Type %q, grpc-status %q, body %q (%v): want 200 %s with grpc-status 14 (UNAVAILABLE)",
			resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Grpc-Status"), body, err, "application/grpc-web+proto")
	}
}
