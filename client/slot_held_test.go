package client_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// oneSlotServer is a server behind sluice's middleware with a concurrency
// limit of one request, serving with serve, and the count of requests it
// refused.
func oneSlotServer(t *testing.T, serve http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	refused := new(atomic.Int64)
	m, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.Concurrency(1, time.Minute)}}},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			if err == nil && !res.Decision.Allowed {
				refused.Add(1)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return httptest.NewServer(m.Handler(serve)), refused
}

// A response whose body streams for longer than a second (a download, an
// event stream) holds its concurrency slot at the server until it ends. A
// concurrency answer states no reset ("concurrent";r=0, no t), and the
// request is answered (no longer in flight) though it has not ended: a
// request made meanwhile must wait for the slot however long the body
// lasts, not be sent as a probe into the server's 429 once a second has
// passed.
func TestAStreamingBodyHoldsItsSlotForAsLongAsItLasts(t *testing.T) {
	stop := make(chan struct{})
	srv, refused := oneSlotServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stream" {
			return
		}
		w.Write([]byte("first chunk"))
		http.NewResponseController(w).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	defer srv.Close()
	defer close(stop)

	hc := &http.Client{Transport: &client.Transport{}}
	get := func(ctx context.Context, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		return hc.Do(req)
	}
	resp, err := get(context.Background(), "/") // the probe: learns the quota of one slot
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stream, err := get(context.Background(), "/stream")
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("stream: %v %v", stream, err)
	}
	defer stream.Body.Close()
	if _, err := io.ReadFull(stream.Body, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	if resp, err := get(ctx, "/"); err == nil {
		resp.Body.Close()
		t.Errorf("a request while a body held the only slot: %d; want it held until its context ended", resp.StatusCode)
	}
	if n := refused.Load(); n > 0 {
		t.Errorf("while a body held the only slot, the Transport sent %d requests the server refused; want none sent", n)
	}
}

// A WebSocket (a 101 answer) holds the only slot of a concurrency quota
// until it is closed, however long it stays open: a request made while it
// is open for more than a second is still held, not sent into the
// server's 429.
func TestAWebSocketHoldsItsSlotForAsLongAsItIsOpen(t *testing.T) {
	closed := make(chan struct{})
	srv, refused := oneSlotServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			return
		}
		header := w.Header().Clone()
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n")
		header.Write(brw)
		brw.WriteString("\r\n")
		brw.Flush()
		io.Copy(io.Discard, bufio.NewReader(brw)) // served until the client closes it
		close(closed)
	})
	defer srv.Close()

	hc := &http.Client{Transport: &client.Transport{}}
	get := func(ctx context.Context, upgrade bool) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
		}
		return hc.Do(req)
	}
	resp, err := get(context.Background(), false) // the probe: learns the quota of one slot
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ws, err := get(context.Background(), true)
	if err != nil || ws.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", ws, err)
	}
	defer func() { ws.Body.Close(); <-closed }()

	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	if resp, err := get(ctx, false); err == nil {
		resp.Body.Close()
		t.Errorf("a request while a WebSocket held the only slot: %d; want it held until its context ended", resp.StatusCode)
	}
	if n := refused.Load(); n > 0 {
		t.Errorf("while a WebSocket held the only slot, the Transport sent %d requests the server refused; want none sent", n)
	}
}

// A call that failed may or may not hold its slot at the server: unlike
// one that has not ended, it does not hold the next call for good. That
// call goes as a probe after the quota's reset (1 s, as a concurrency
// answer states none), which learns whether the slot is free.
func TestALostCallsSlotIsLearnedByAProbe(t *testing.T) {
	p := client.NewPacer("s", time.Minute)
	header := http.Header{}
	header.Set("RateLimit-Policy", `"c";q=1;qu="concurrent-requests"`)
	header.Set("RateLimit", `"c";r=0`)
	probe, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	probe.Done(client.Answer{Header: header}) // held the only slot, and ended
	lost, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	lost.Done(client.Answer{Failed: true})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	next, err := p.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("the call after a lost one: %v after %v; want it sent as a probe after about a second",
			err, time.Since(start).Round(time.Millisecond))
	}
	next.Done(client.Answer{Header: header})
}

// A call the caller ended before the server was done with it (Send.Cut: a
// stream cancelled) may hold its slot at the server until the handler
// returns: unlike an End, it does not give the slot back at once, and
// unlike a stream still open, it does not hold it for good. The next call
// goes as a probe after the quota's reset (1 s, as a concurrency answer
// states none); an End after the Cut changes nothing.
func TestACutCallsSlotIsLearnedByAProbe(t *testing.T) {
	p := client.NewPacer("s", time.Minute)
	header := http.Header{}
	header.Set("RateLimit-Policy", `"c";q=1;qu="concurrent-requests"`)
	header.Set("RateLimit", `"c";r=0`)
	stream, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	stream.Done(client.Answer{Header: header, Streaming: true}) // holds the only slot
	stream.Cut()
	stream.End() // the call's end was recorded by the Cut

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	next, err := p.Wait(ctx, 1)
	elapsed := time.Since(start)
	if err != nil || elapsed < 800*time.Millisecond {
		t.Fatalf("the call after a cut one: %v after %v; want it sent as a probe after about a second",
			err, elapsed.Round(time.Millisecond))
	}
	next.Done(client.Answer{Header: header})
}
