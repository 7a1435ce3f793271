package server_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// A client-streaming (or bidirectional) call lives while it moves
// messages, whichever way they go: once the proxy reads the request's body,
// the listener's read_timeout bounds the body's silence between reads, not
// its length (docs/grpc.md; nginx's client_body_timeout). Here an h2c call
// sends a message every 100ms for 2.5s, each echoed by the upstream, behind
// a 1s read_timeout.
func TestClientStreamOutlivesReadTimeout(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		rc.Flush()
		br := bufio.NewReader(r.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			io.WriteString(w, "echo "+line)
			rc.Flush()
		}
	}))
	up.Config.Protocols = new(http.Protocols)
	up.Config.Protocols.SetUnencryptedHTTP2(true)
	up.Start()
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: h2c://"+strings.TrimPrefix(up.URL, "http://")+"\n"+streamsConfig)
	addrs := serveOn(t, srv)

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", "http://"+addrs.public+"/pkg.Service/Upload", pr)
	req.Header.Set("Content-Type", "application/octet-stream")
	type result struct {
		resp *http.Response
		err  error
	}
	rc := make(chan result, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		rc <- result{resp, err}
	}()
	fmt.Fprintf(pw, "line 0\n")
	res := <-rc
	if res.err != nil {
		t.Fatal(res.err)
	}
	defer res.resp.Body.Close()
	if res.resp.StatusCode != 200 {
		t.Fatalf("status %d", res.resp.StatusCode)
	}
	rd := bufio.NewReader(res.resp.Body)
	start := time.Now()
	for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
		if i > 0 {
			if _, err := fmt.Fprintf(pw, "line %d\n", i); err != nil {
				t.Fatalf("after %v, sending line %d: %v", time.Since(start).Round(time.Millisecond), i, err)
			}
		}
		got, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("after %v, line %d: %v (read_timeout 1s cut a stream that moves data)", time.Since(start).Round(time.Millisecond), i, err)
		}
		if want := fmt.Sprintf("echo line %d\n", i); got != want {
			t.Fatalf("line %d: got %q, want %q", i, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A request body that stops arriving is still bounded once the proxy reads
// it: after read_timeout (1s here) of silence the client is answered 408,
// its failure told from the upstream's, rather than holding its connection
// and the upstream's for as long as it likes (nor for stream_idle_timeout,
// 5 minutes by default: a slow sender's bound stays read_timeout).
func TestStalledRequestBodyIsARequestTimeout(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		io.WriteString(w, "read it all")
	}))
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)

	c, err := net.Dial("tcp", addrs.public)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: "+addrs.public+"\r\nContent-Length: 100\r\n\r\n0123456789")
	r, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "POST"})
	if err != nil {
		t.Fatalf("after %v: %v, want a 408", time.Since(start).Round(time.Millisecond), err)
	}
	r.Body.Close()
	if took := time.Since(start); r.StatusCode != http.StatusRequestTimeout || took < 900*time.Millisecond {
		t.Errorf("a body silent after 10 of its 100 bytes: %d after %v, want 408 after the 1s read_timeout", r.StatusCode, took.Round(time.Millisecond))
	}
}

// The bound of a request's body ends with the body: a POST answered by a
// stream (model output, events) lives while the answer moves data, though
// its body arrived whole at once, here for 2.5s behind a 1s read_timeout
// and a 0.8s stream_idle_timeout. HTTP/1.1's server reads on past the body
// (to learn whether the client left), which no bound of the body cuts.
func TestStreamAnsweringAPostOutlivesItsBody(t *testing.T) {
	up := streamingUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Post("http://"+addrs.public+"/events?n=25", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	body, err := io.ReadAll(resp.Body)
	if n := strings.Count(string(body), "data:"); err != nil || n != 25 {
		t.Fatalf("got %d of 25 events in %v (err %v): a bound of the body cut the stream answering it", n, time.Since(start).Round(time.Millisecond), err)
	}
}

// connections.stream_idle_timeout 0 (a Config built in Go without it)
// bounds no stream's silence, and write_timeout bounds only the wait for
// the answer to start (docs/decisions.md): with 0, an event stream of 25
// events over 2.5s arrives whole behind a 1s write_timeout.
func TestNoStreamIdleBoundIsNoLengthBound(t *testing.T) {
	up := streamingUpstream(t)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte("upstream: "+up.URL+"\n"+streamsConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Connections.StreamIdleTimeout = 0
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Memory: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	addrs := serveOn(t, srv)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addrs.public + "/events?n=25")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	body, err := io.ReadAll(resp.Body)
	if n := strings.Count(string(body), "data:"); err != nil || n != 25 {
		t.Fatalf("got %d of 25 events in %v (err %v): the 1s write_timeout cut a stream that moves data", n, time.Since(start).Round(time.Millisecond), err)
	}
}

// An upstream may start its answer before it reads the request's body (a
// progress stream over an upload, a bidirectional HTTP/1.1 exchange): the
// proxy keeps sending the body to it, whole, while the answer flows back.
// net/http's HTTP/1.1 server would otherwise drain and close the client's
// body as the proxy writes the answer's header, under the transport
// sending it: the upstream read part of it, or its connection broke.
func TestAnUpstreamAnsweringBeforeItReadsGetsTheWholeBody(t *testing.T) {
	const size = 200 << 10
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		rc.EnableFullDuplex() // else this server drains the body itself
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(200)
		rc.Flush()
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "read %d bytes, err %v\n", n, err)
	}))
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	for i := range 20 {
		resp, err := client.Post("http://"+addrs.public+"/upload", "application/octet-stream", strings.NewReader(strings.Repeat("x", size)))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("read %d bytes, err <nil>\n", size); err != nil || string(body) != want {
			t.Fatalf("upload %d: the upstream said %q (err %v), want %q", i, body, err, want)
		}
	}
}
