package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// earlyUpstream is an HTTP/1.1 server that answers every request with a
// 401 as soon as it read the request's header, before it reads the body
// (an upload refused unread, as an upstream checking credentials first
// does), then reads and discards whatever the connection brings, so the
// proxy may send the rest of the body; it records the paths it was asked.
func earlyUpstream(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var paths []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[2], "HTTP/") {
						mu.Lock()
						paths = append(paths, f[1])
						mu.Unlock()
						for {
							h, err := br.ReadString('\n')
							if err != nil {
								return
							}
							if h == "\r\n" {
								break
							}
						}
						io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nnope.\n")
					}
				}
			}()
		}
	}()
	up := &httptest.Server{URL: "http://" + ln.Addr().String(), Listener: ln}
	t.Cleanup(func() { ln.Close() })
	return up, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), paths...)
	}
}

// startUpload opens a connection to addr, sends head and part of a body,
// and reads the answer the upstream gave before the body ended.
func startUpload(t *testing.T, addr, head string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(conn, head)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the early answer: %d, want the upstream's 401", resp.StatusCode)
	}
	time.Sleep(200 * time.Millisecond) // the handler returned
	return conn, br
}

// The bytes of a request's body are never a request. The proxy is full
// duplex, so net/http neither drains the body nor closes the connection as
// the answer's header is written; when the upstream answers an upload
// before its body ended (an early 401), the answer closes its connection:
// the rest of the client's body must not be parsed as its next request
// (RFC 9112 §9.6; nginx with proxy_request_buffering off discards the rest
// or closes). The client, which sent a well-formed body and a next
// request, gets the answer to that request or a closed connection, never
// a stray 400 for its own body bytes.
func TestTheRestOfAChunkedUploadAfterAnEarlyAnswerIsNoRequest(t *testing.T) {
	up, paths := earlyUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)

	conn, br := startUpload(t, addrs.public, "POST /upload HTTP/1.1\r\nHost: example.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	// The body's rest, well formed, then the next request.
	io.WriteString(conn, "5\r\nworld\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: example.test\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	next, err := http.ReadResponse(br, nil)
	if err != nil {
		// The connection closed: the client sends /next again, on another.
		return
	}
	body, _ := io.ReadAll(next.Body)
	next.Body.Close()
	if next.StatusCode != http.StatusUnauthorized || !slices.Contains(paths(), "/next") {
		t.Fatalf("the answer after /upload's on its connection: %d %q, the upstream asked %q: the rest of /upload's body was read as a request, want the answer to GET /next or the connection closed", next.StatusCode, body, paths())
	}
}

// A body that stalls does not hold its connection once the answer
// started: when the upstream answers an upload before its body ended and
// the client then stops sending but keeps its connection, the connection
// closes once the answer is sent, rather than net/http reading the rest
// of the body (up to 256 KiB) with no deadline at all.
func TestAStalledUploadAfterAnEarlyAnswerDoesNotHoldItsConnection(t *testing.T) {
	up, _ := earlyUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig) // read_timeout: 1s
	addrs := serveOn(t, srv)

	conn, br := startUpload(t, addrs.public, "POST /upload HTTP/1.1\r\nHost: example.test\r\nContent-Length: 1000\r\n\r\nhello")
	// The client sends no more, and waits.
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(6 * time.Second))
	_, err := br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection of a body stalled for %v after its answer is still open: want it closed once the answer is sent", time.Since(start).Round(time.Second))
	}
}
