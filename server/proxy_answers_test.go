package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// h2cClient is a client speaking HTTP/2 without TLS (h2c), as the public
// listener does, and browsers over TLS by ALPN.
func h2cClient(t *testing.T) *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// h2cUpstream starts h as an upstream speaking h2c (a gRPC server).
func h2cUpstream(t *testing.T, h http.HandlerFunc) string {
	up := httptest.NewUnstartedServer(h)
	up.Config.Protocols = new(http.Protocols)
	up.Config.Protocols.SetUnencryptedHTTP2(true)
	up.Start()
	t.Cleanup(up.Close)
	return "h2c://" + strings.TrimPrefix(up.URL, "http://")
}

// TestHTTP2UpstreamThatDoesNotAnswerIsAGatewayTimeout: an upstream that has
// not started its answer within write_timeout of receiving the request
// whole gets the client the 504 problem over HTTP/2 as over HTTP/1.1: the
// stream's write deadline leaves the proxy room to write it, instead of
// resetting the stream as write_timeout passes.
func TestHTTP2UpstreamThatDoesNotAnswerIsAGatewayTimeout(t *testing.T) {
	stop := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // a handler that reads no body learns of no client leaving
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(up.Close)
	t.Cleanup(func() { close(stop) })
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)
	client := h2cClient(t)
	for _, tc := range []struct{ name, method, body string }{
		{"a GET", "GET", ""},
		{"a POST whose body the upstream never reads", "POST", "some body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://"+addrs.public+"/hang", strings.NewReader(tc.body))
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("after %v: %v; want the 504 problem", time.Since(start).Round(time.Millisecond), err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.ProtoMajor != 2 || resp.StatusCode != http.StatusGatewayTimeout ||
				!strings.Contains(string(body), "did not answer in time") {
				t.Fatalf("HTTP/%d %d %q (%v), want an HTTP/2 504 problem", resp.ProtoMajor, resp.StatusCode, body, err)
			}
			if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
				t.Errorf("answered after %v; write_timeout is 1s", d)
			}
		})
	}
}

// TestInterimContinueDoesNotStartTheAnswer: the upstream's 100 Continue to
// an upload sent with Expect: 100-continue (curl sends it for every body
// over 1 MiB) is no answer: the upload moves the wait for the answer as
// any body does, and stream_idle_timeout (0.8s), which bounds an answer's
// silences once it started, does not cut an upload that moves every 100ms
// for 2.5s.
func TestInterimContinueDoesNotStartTheAnswer(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		fmt.Fprintf(w, "got %d", len(b))
	}))
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+"\n"+streamsConfig)
	addrs := serveOn(t, srv)

	c, err := net.Dial("tcp", addrs.public)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	const parts, size = 25, 10
	fmt.Fprintf(c, "POST /upload HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", addrs.public, parts*size)
	br := bufio.NewReader(c)
	cont, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	if err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue first: %v %v", cont, err)
	}
	start := time.Now()
	for i := range parts {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := io.WriteString(c, strings.Repeat("x", size)); err != nil {
			t.Fatalf("after %v, part %d: %v; the connection closed without an answer", time.Since(start).Round(time.Millisecond), i, err)
		}
	}
	// A second 100 may come before the answer (the upstream's, relayed,
	// when the proxy's own went first): a client reads interim answers
	// until the final one (RFC 9110 §15.2).
	resp, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	for err == nil && resp.StatusCode == http.StatusContinue {
		resp, err = http.ReadResponse(br, &http.Request{Method: "POST"})
	}
	if err != nil {
		t.Fatalf("after %v of an upload moving every 100ms: %v; want the upstream's answer", time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want := fmt.Sprintf("got %d", parts*size); resp.StatusCode != 200 || string(body) != want {
		t.Fatalf("after %v: %d %q, want 200 %q", time.Since(start).Round(time.Millisecond), resp.StatusCode, body, want)
	}
}

// TestExemptAnswerKeepsTheUpstreamsRateLimitFields: the proxy drops the
// upstream's fields of sluice's RateLimit names only from an answer
// sluice set them on; an exempt request's answer, which sluice sets none
// on, carries the upstream's (an API with a limiter of its own) as sent.
func TestExemptAnswerKeepsTheUpstreamsRateLimitFields(t *testing.T) {
	f := newFixtureOn(t, testConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Policy", `"upstream";q=10;w=60`)
		w.Header().Set("RateLimit", `"upstream";r=9;t=60`)
		w.Write([]byte("ok"))
	}))
	r := f.do(t, "GET", "/api/health", "", nil) // exempt: ["GET /api/health"]
	readAll(t, r)
	if got := r.Header.Values("RateLimit"); len(got) != 1 || got[0] != `"upstream";r=9;t=60` {
		t.Errorf("exempt answer's RateLimit %q, want the upstream's alone (sluice sent none)", got)
	}
	if got := r.Header.Values("RateLimit-Policy"); len(got) != 1 || got[0] != `"upstream";q=10;w=60` {
		t.Errorf("exempt answer's RateLimit-Policy %q, want the upstream's alone", got)
	}
	r = f.do(t, "GET", "/x", "", nil) // admitted: sluice's fields alone
	readAll(t, r)
	if got := r.Header.Values("RateLimit"); len(got) != 1 || strings.Contains(got[0], "upstream") {
		t.Errorf("admitted answer's RateLimit %q, want sluice's alone", got)
	}
}

// TestGRPCCallWhoseBodyStalledGetsATrailersOnlyAnswer: the proxy's own
// answers (its 400, 408, 502 and 504) are sluice's, and to a gRPC call
// they are trailers-only answers as its other own answers are: a
// client-streaming call whose messages stall past read_timeout gets
// DEADLINE_EXCEEDED, not a plain HTTP 408, which gRPC clients read as
// UNKNOWN. Over HTTP/2 the stalled stream ends alone: the connection
// carries the next call.
func TestGRPCCallWhoseBodyStalledGetsATrailersOnlyAnswer(t *testing.T) {
	upstream := h2cUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "0")
	})
	cfg := `
connections: {read_timeout: 500ms, write_timeout: 5s, stream_idle_timeout: 5s}
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
`
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+upstream+"\n"+cfg)
	addrs := serveOn(t, srv)
	client := h2cClient(t)
	call := func(body io.Reader) (*http.Response, bool) {
		t.Helper()
		reused := false
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		})
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addrs.public+"/test.Up/Upload", body)
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, reused
	}

	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte{0, 0, 0, 0, 100, 'a', 'b'}) // a message of 100 bytes announced, 2 sent, then silence
	resp, _ := call(pr)
	if resp.StatusCode != 200 || resp.Header.Get("Grpc-Status") != "4" || resp.Header.Get("Content-Type") != "application/grpc" {
		t.Fatalf("a gRPC call whose body stalled: HTTP %d, Content-Type %q, grpc-status %q; want a trailers-only answer, grpc-status 4 (DEADLINE_EXCEEDED)",
			resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Grpc-Status"))
	}
	resp, reused := call(strings.NewReader("\x00\x00\x00\x00\x00"))
	if resp.StatusCode != 200 || resp.Header.Get("Grpc-Status") != "" && resp.Header.Get("Grpc-Status") != "0" {
		t.Fatalf("the next call: HTTP %d, grpc-status %q", resp.StatusCode, resp.Header.Get("Grpc-Status"))
	}
	if !reused {
		t.Error("the next call took a new connection: the stalled stream's answer closed the connection (Connection: close is GOAWAY on HTTP/2)")
	}
}

// TestClientThatLeftBeforeTheAnswerIsNoAnswer: a client that leaves while
// the upstream works on its request gets no answer, which the limits that
// count by response count as a 500 (docs/rules.md), not as the 200 of an
// empty answer: under count: failures its charge stands.
func TestClientThatLeftBeforeTheAnswerIsNoAnswer(t *testing.T) {
	reached := make(chan struct{}, 1)
	f := newFixtureOn(t, `
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m, count: failures}]
anonymous_plan: anonymous
`, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			reached <- struct{}{}
			<-r.Context().Done()
			return
		}
		w.Write([]byte("ok"))
	}))
	done := make(chan struct{}, 1)
	public := f.srv.PublicHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			defer func() { done <- struct{}{} }() // the handler may end by panicking with http.ErrAbortHandler
		}
		public.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/hang", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-reached
	cancel() // the client leaves before the upstream answers
	<-errc
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not end the request of a client that left")
	}
	r := f.send(t, ts, "GET", "/x", "", nil)
	readAll(t, r)
	if r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("after a request whose client left before the upstream answered: %d, want 429 (no answer counts as a 500, a failure that spends the quota of 1)", r.StatusCode)
	}
}

// TestUpstreamRateLimitTrailersDoNotReachTheClient: a gRPC service limited
// by grpclimit sends its RateLimit fields in the call's trailing metadata
// (docs/grpc.md); behind sluice the client reads sluice's alone, in the
// header and again in the trailers (as a grpclimit.Server sends them),
// whether the service announced its trailers or not.
func TestUpstreamRateLimitTrailersDoNotReachTheClient(t *testing.T) {
	for _, announced := range []bool{false, true} {
		t.Run(fmt.Sprintf("announced %v", announced), func(t *testing.T) {
			upstream := h2cUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/grpc")
				if announced {
					w.Header().Set("Trailer", "Grpc-Status, Ratelimit, Ratelimit-Policy")
				}
				w.WriteHeader(200)
				w.Write([]byte{0, 0, 0, 0, 0})
				prefix := http.TrailerPrefix
				if announced {
					prefix = ""
				}
				w.Header().Set(prefix+"Grpc-Status", "0")
				w.Header().Set(prefix+"Ratelimit", `"upstream";r=999;t=7777`)
				w.Header().Set(prefix+"Ratelimit-Policy", `"upstream";q=1000;w=60`)
			})
			srv, _ := loadServer(t, t.TempDir(), "upstream: "+upstream+"\n"+grpcConfig)
			addrs := serveOn(t, srv)
			req, _ := http.NewRequest("POST", "http://"+addrs.public+"/test.S/M", strings.NewReader("\x00\x00\x00\x00\x00"))
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("Te", "trailers")
			resp, err := h2cClient(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || resp.Header.Get("Ratelimit") == "" {
				t.Fatalf("HTTP %d, RateLimit %q: want an admitted call with sluice's fields", resp.StatusCode, resp.Header.Get("Ratelimit"))
			}
			if got := resp.Trailer.Get("Grpc-Status"); got != "0" {
				t.Errorf("grpc-status trailer %q, want the service's 0", got)
			}
			for _, name := range []string{"Ratelimit", "Ratelimit-Policy"} {
				h, tr := resp.Header.Values(name), resp.Trailer.Values(name)
				if len(h) != 1 || len(tr) != 1 || tr[0] != h[0] {
					t.Errorf("%s: header %q, trailer %q: want sluice's value alone in each", name, h, tr)
				}
			}
		})
	}
}
