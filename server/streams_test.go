package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/internal/testpki"
	"github.com/sluice-dev/sluice/server"
)

// streamsConfig gives requests one second to arrive and one to be answered,
// and streams 0.8s of silence.
const streamsConfig = `
connections: {read_timeout: 1s, write_timeout: 1s, stream_idle_timeout: 800ms}
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
`

// streamingUpstream answers /ws with a switch to the line-echo protocol
// "echo", and /events with Server-Sent Events: n events every 100ms when
// asked ?n=…, then one more after a silence of ?quiet=… if given; /hang
// never answers.
func streamingUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "upgrade to echo", http.StatusUpgradeRequired)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		rw.Flush()
		for {
			line, err := rw.ReadString('\n')
			if err != nil {
				return
			}
			rw.WriteString("echo " + line)
			rw.Flush()
		}
	})
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		var n int
		var quiet time.Duration
		fmt.Sscan(r.URL.Query().Get("n"), &n)
		quiet, _ = time.ParseDuration(r.URL.Query().Get("quiet"))
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := range n {
			fmt.Fprintf(w, "data: %d\n\n", i)
			rc.Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if quiet > 0 {
			select {
			case <-time.After(quiet):
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "data: after the silence\n\n")
		}
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	up := httptest.NewServer(mux)
	t.Cleanup(up.Close)
	return up
}

// TestStreamsOutliveTheRequestTimeouts: a WebSocket-style protocol switch
// and a Server-Sent Events stream through the reverse proxy live as long
// as they move data — here twice the listener's read and write timeouts —
// and end after connections.stream_idle_timeout of silence.
func TestStreamsOutliveTheRequestTimeouts(t *testing.T) {
	up := streamingUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)

	t.Run("switched protocol", func(t *testing.T) {
		conn, rd := switchToEcho(t, addrs.public)
		switched := func() string {
			m := readAllURL(t, "http://"+addrs.admin+"/metrics")
			i := strings.Index(m, "\nsluice_proxy_switched_connections ")
			if i < 0 {
				t.Fatal("no sluice_proxy_switched_connections in /metrics")
			}
			return strings.Fields(m[i+1:])[1]
		}
		if n := switched(); n != "1" {
			t.Errorf("sluice_proxy_switched_connections %s with one open", n)
		}
		start, last := time.Now(), time.Now()
		for i := 0; time.Since(start) < 2500*time.Millisecond; i++ {
			fmt.Fprintf(conn, "line %d\n", i)
			got, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("after %v, line %d: %v", time.Since(start).Round(time.Millisecond), i, err)
			}
			if want := fmt.Sprintf("echo line %d\n", i); got != want {
				t.Fatalf("line %d: got %q, want %q", i, got, want)
			}
			last = time.Now()
			time.Sleep(100 * time.Millisecond)
		}
		// Silence: the connection ends after stream_idle_timeout.
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := rd.ReadString('\n'); err == nil {
			t.Fatal("a silent connection got data")
		} else if e, ok := err.(net.Error); ok && e.Timeout() {
			t.Fatal("a silent switched connection was still open after 5s")
		}
		if d := time.Since(last); d < 750*time.Millisecond {
			t.Errorf("the silent connection was closed after %v, before stream_idle_timeout", d)
		}
		if n := switched(); n != "0" {
			t.Errorf("sluice_proxy_switched_connections %s once it closed", n)
		}
	})

	t.Run("server-sent events", func(t *testing.T) {
		eventStreams(t, "http://"+addrs.public, &http.Client{Timeout: 10 * time.Second}, "HTTP/1.1")
	})

	// The same over HTTP/2, where the timeouts are the stream's, not the
	// connection's.
	ca := testpki.New(t, "streams CA")
	ca.Server(t, "public")
	srv2, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig+
		"tls: {cert_file: "+ca.File("public")+", key_file: "+ca.KeyFile("public")+"}\n")
	addrs2 := serveOn(t, srv2)
	t.Run("server-sent events over HTTP/2", func(t *testing.T) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}
		t.Cleanup(tr.CloseIdleConnections)
		eventStreams(t, "https://"+addrs2.public, &http.Client{Timeout: 10 * time.Second, Transport: tr}, "HTTP/2.0")
	})
}

// eventStreams reads through c from base, speaking proto: 25 events over
// 2.5s, all of them; then 2 events and a silence of 3s, which ends the
// stream after stream_idle_timeout.
func eventStreams(t *testing.T, base string, c *http.Client, proto string) {
	t.Helper()
	get := func(query string) (*http.Response, time.Time) {
		resp, err := c.Get(base + "/events?" + query)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.Proto != proto || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %d, want %s 200", resp.Proto, resp.StatusCode, proto)
		}
		return resp, time.Now()
	}
	resp, start := get("n=25")
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("after %v and %d events: %v", time.Since(start).Round(time.Millisecond), strings.Count(string(body), "data:"), err)
	}
	if n := strings.Count(string(body), "data:"); n != 25 {
		t.Fatalf("got %d of 25 events in %v", n, time.Since(start).Round(time.Millisecond))
	}

	resp, start = get("n=2&quiet=3s")
	body, _ = io.ReadAll(resp.Body)
	if d := time.Since(start); strings.Contains(string(body), "after the silence") || d > 2500*time.Millisecond {
		t.Fatalf("a stream silent for 3s was kept open for %v: %q", d.Round(time.Millisecond), body)
	}
	if n := strings.Count(string(body), "data:"); n != 2 {
		t.Fatalf("got %d of the 2 events before the silence: %q", n, body)
	}
}

// switchToEcho opens a connection to addr and switches it to the echo
// protocol through the proxy.
func switchToEcho(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n", addr)
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, want 101: %s", resp.StatusCode, b)
	}
	return conn, rd
}

// TestStreamsAreNotLoad: long streams are requests answered, not requests
// waiting: four WebSockets and four event streams open for 2.5s do not
// count as in flight, so a server that enters its first level at 3 in
// flight stays normal. (Their latency, taken when the answer starts, is
// not judged here: a p99 counts only from 100 answers in an interval.)
func TestStreamsAreNotLoad(t *testing.T) {
	up := streamingUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig+`
degradation:
  min_answers: 1
  interval: 25ms
  min_dwell: 100ms
  levels:
    elevated: {enter: {in_flight: 3}, leave: {in_flight: 1}}
`)
	addrs := serveOn(t, srv)
	stop := make(chan struct{})
	levels := make(chan []degrade.Level, 1)
	go func() {
		var seen []degrade.Level
		for {
			if l := srv.Degradation().Level; len(seen) == 0 || seen[len(seen)-1] != l {
				seen = append(seen, l)
			}
			select {
			case <-stop:
				levels <- seen
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	// The streams open one after another, each answered before the next is
	// sent, so that no more than one request waits for its answer at a time:
	// only streams counted as in flight could reach the threshold.
	var wg sync.WaitGroup
	for range 4 {
		conn, rd := switchToEcho(t, addrs.public)
		wg.Go(func() {
			for i := range 25 {
				fmt.Fprintf(conn, "line %d\n", i)
				if _, err := rd.ReadString('\n'); err != nil {
					t.Errorf("line %d: %v", i, err)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		resp, err := http.Get("http://" + addrs.public + "/events?n=25")
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			if body, err := io.ReadAll(resp.Body); err != nil || strings.Count(string(body), "data:") != 25 {
				t.Errorf("event stream: %d events, %v", strings.Count(string(body), "data:"), err)
			}
		})
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond) // the streams' ends are sampled
	close(stop)
	if seen := <-levels; len(seen) != 1 || seen[0] != degrade.Normal {
		t.Fatalf("levels seen while streams were open: %v", seen)
	}
}

// TestUpstreamThatDoesNotAnswerIsAGatewayTimeout: an upstream that has not
// started its answer within write_timeout gets the client a 504 problem,
// not a connection closed without a word.
func TestUpstreamThatDoesNotAnswerIsAGatewayTimeout(t *testing.T) {
	up := streamingUpstream(t)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)
	start := time.Now()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addrs.public + "/hang")
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusGatewayTimeout || resp.Header.Get("Content-Type") != "application/problem+json" ||
		!strings.Contains(string(body), "did not answer in time") {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
		t.Errorf("answered after %v; write_timeout is 1s", d)
	}
}

// TestShutdownClosesSwitchedConnections: the http.Server neither waits for
// nor closes a connection switched to another protocol; Serve closes them
// when it stops, so that their clients reconnect elsewhere and nothing is
// left running.
func TestShutdownClosesSwitchedConnections(t *testing.T) {
	up := streamingUpstream(t)
	cfg := strings.Replace(streamsConfig, "stream_idle_timeout: 800ms", "stream_idle_timeout: 1m", 1)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+cfg)
	ls := server.Listeners{Public: listenLoopback(t), Admin: listenLoopback(t)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ls) }()
	conn, rd := switchToEcho(t, ls.Public.Addr().String())
	fmt.Fprintf(conn, "before\n")
	if got, err := rd.ReadString('\n'); err != nil || got != "echo before\n" {
		t.Fatalf("%q, %v", got, err)
	}
	cancel()
	stopped := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := rd.ReadString('\n'); err != io.EOF {
		t.Fatalf("after shutdown the switched connection read %v, want EOF", err)
	}
	if d := time.Since(stopped); d > 3*time.Second {
		t.Errorf("the switched connection closed %v after the stop", d)
	}
}
